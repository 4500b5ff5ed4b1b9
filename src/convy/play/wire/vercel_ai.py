"""The Vercel AI SDK's UI message stream (what `useChat` speaks; pydantic-ai's Vercel AI adapter
serves it) as a dialect: each turn posts the chat's id and its UI messages with their text parts,
every message with its id; the answer streams as parts, its text the `text-delta`s, its tool calls
the `tool-*` parts, an `error` part a failure."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from convy.play.agent import AgentFailure
from convy.play.trace import MESSAGE_IDS
from convy.play.wire.calls import Gathered
from convy.play.wire.dialect import Ask, Fold, Settled
from convy.play.wire.reading import AgentReply
from convy.play.wire.stream import Event


class VercelAi(msgspec.Struct, Settled, frozen=True):
    """A Vercel AI SDK chat endpoint (`POST {id, messages, trigger}`, read the UI message stream).
    The server keeps no history: each turn sends the dialogue as UI messages (`{id, role, parts:
    [{type: text, text}]}`, each message with the same id every time) under the chat id
    `chat-<first message's id>` (one per conversation), `trigger: submit-message`, and the new
    message's id as `messageId`."""

    shown: str

    def body(self, ask: Ask) -> object:
        ids = ask.ids or (MESSAGE_IDS.fresh(),)
        messages = [
            {"id": id, "role": message.role, "parts": [{"type": "text", "text": message.content}]}
            for id, message in zip(ids, ask.dialogue, strict=False)
        ]
        chat = f"chat-{ids[0]}"
        return {"id": chat, "messages": messages, "trigger": "submit-message", "messageId": ids[-1]}

    def headers(self) -> Mapping[str, str]:
        return {}

    def read(self, data: object) -> AgentReply:
        raise AgentFailure(
            "bad_answer",
            f"the answer from {self.shown} is JSON, not the UI message stream a Vercel AI chat answers with",
        )

    def fold(self) -> Fold:
        return UiMessageParts(self.shown)


class UiMessageParts:
    """A UI message stream folded: each `text-delta`'s `delta` appended to the answer; reasoning
    deltas as a thought; `tool-input-start`/`-delta`/`-available` and `tool-output-available` (or
    `-error`) as calls with their arguments and results (never in the answer); an `error` part
    breaks the stream with its `errorText` (stream_broken)."""

    def __init__(self, shown: str) -> None:
        self._shown = shown
        self._gathered = Gathered()

    def add(self, event: Event) -> str:
        data = event.data
        if not isinstance(data, dict):
            return ""
        id = data.get("toolCallId")
        match data.get("type"):
            case "error":
                said = data.get("errorText")
                message = said.strip() if isinstance(said, str) else ""
                raise AgentFailure(
                    "stream_broken",
                    f"the stream from {self._shown} broke: {message or 'no reason given'}",
                    message=message,
                )
            case "text-delta":
                return self._gathered.said(data.get("delta"))
            case "reasoning-delta":
                self._gathered.thought(data.get("delta"))
            case "tool-input-start":
                self._gathered.calls.began(id, data.get("toolName"))
            case "tool-input-delta":
                self._gathered.calls.argued(id, data.get("inputTextDelta"))
            case "tool-input-available":
                self._gathered.calls.began(id, data.get("toolName"))
                self._gathered.calls.argued_whole(id, data.get("input"))
            case "tool-output-available":
                self._gathered.calls.returned(id, data.get("output"))
            case "tool-output-error":
                self._gathered.calls.returned(id, data.get("errorText"))
        return ""

    def reply(self) -> AgentReply:
        return self._gathered.reply()
