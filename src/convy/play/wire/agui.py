"""AG-UI (the Agent-User Interaction protocol of pydantic-ai, agno, CrewAI, Mastra and CopilotKit)
as a dialect: each turn is a run (`RunAgentInput`) carrying the whole dialogue, every message with
its id, a thread id for the conversation and a fresh run id; the answer is a stream of events, its
text the TEXT_MESSAGE deltas, its tool calls the TOOL_CALL events, a RUN_ERROR a failure."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from convy.play.agent import AgentFailure
from convy.play.trace import MESSAGE_IDS
from convy.play.wire.calls import Gathered
from convy.play.wire.dialect import Ask, Fold, Settled
from convy.play.wire.reading import AgentReply
from convy.play.wire.stream import Event

TEXT = ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK")
REASONING = ("REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_CHUNK", "THINKING_TEXT_MESSAGE_CONTENT")


class AgUi(msgspec.Struct, Settled, frozen=True):
    """An AG-UI endpoint (`POST` a RunAgentInput, read server-sent events). The server keeps no
    history: each run sends the dialogue as AG-UI messages (`{id, role, content}`, each message
    with the same id every time), under the thread id `thread-<first message's id>` (one per
    conversation) and a new run id per turn; `state`, `tools`, `context` and `forwardedProps` go
    empty, as the schema asks for them."""

    shown: str

    def body(self, ask: Ask) -> object:
        ids = ask.ids or (MESSAGE_IDS.fresh(),)
        messages = [
            {"id": id, "role": message.role, "content": message.content}
            for id, message in zip(ids, ask.dialogue, strict=False)
        ]
        return {
            "threadId": f"thread-{ids[0]}",
            "runId": f"run-{MESSAGE_IDS.fresh()}",
            "messages": messages,
            "state": {},
            "tools": [],
            "context": [],
            "forwardedProps": {},
        }

    def headers(self) -> Mapping[str, str]:
        return {}

    def read(self, data: object) -> AgentReply:
        raise AgentFailure(
            "bad_answer", f"the answer from {self.shown} is JSON, not the event stream AG-UI answers with"
        )

    def fold(self) -> Fold:
        return AgUiEvents(self.shown)


class AgUiEvents:
    """An AG-UI run's events folded: the `delta` of each TEXT_MESSAGE_CONTENT (or _CHUNK) appended
    to the answer; reasoning deltas as a thought; TOOL_CALL_START/ARGS/CHUNK/RESULT as calls with
    their arguments and results (never in the answer); RUN_ERROR breaks the stream with its
    `message` (run_failed)."""

    def __init__(self, shown: str) -> None:
        self._shown = shown
        self._gathered = Gathered()

    def add(self, event: Event) -> str:
        data = event.data
        if not isinstance(data, dict):
            return ""
        kind = data.get("type")
        delta = data.get("delta")
        match kind:
            case "RUN_ERROR":
                said = data.get("message")
                message = said.strip() if isinstance(said, str) else ""
                raise AgentFailure(
                    "run_failed",
                    f"the run at {self._shown} failed: {message or 'no reason given'}",
                    message=message,
                )
            case _ if kind in TEXT:
                return self._gathered.said(delta)
            case _ if kind in REASONING:
                self._gathered.thought(delta)
            case "TOOL_CALL_START" | "TOOL_CALL_CHUNK":
                self._gathered.calls.began(data.get("toolCallId"), data.get("toolCallName"))
                self._gathered.calls.argued(data.get("toolCallId"), delta)
            case "TOOL_CALL_ARGS":
                self._gathered.calls.argued(data.get("toolCallId"), delta)
            case "TOOL_CALL_RESULT":
                self._gathered.calls.returned(data.get("toolCallId"), data.get("content"))
        return ""

    def reply(self) -> AgentReply:
        return self._gathered.reply()
