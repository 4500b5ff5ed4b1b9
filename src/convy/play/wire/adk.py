"""Google ADK's own server (`adk api_server`) as a preset protocol: a session made for the app and
user when a conversation opens (`POST /apps/{app}/users/{user}/sessions`) and deleted when it
closes, each turn streamed from `POST /run_sse` (its partial events assembled), the build read
from `GET /version`.

The answer is the text of the model's last complete event (the partials' text when none came
whole); its function calls are the steps, each with the result its function response gave."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import httpx
import msgspec

from convy.play.agent import AgentFailure, Answer, Call, Usage
from convy.play.errorbody import ErrorBody, Masked
from convy.play.wire.dialect import Ask, Fold
from convy.play.wire.oauth import AccessToken
from convy.play.wire.reading import AgentReply, JsonText
from convy.play.wire.served import Build, ServerInfo
from convy.play.wire.session import Quoted
from convy.play.wire.spec import AgentSpec, Endpoint, SessionSpec
from convy.play.wire.stream import Event


class Adk(msgspec.Struct, frozen=True):
    """The ADK server at the agent file's `url` (its base), running the app `app` for `user`."""

    spec: AgentSpec
    shown: str

    def played(self) -> AgentSpec:
        """The agent as its turns are sent: `/run_sse`, the ADK session as its session, streamed."""
        base = self.spec.url.rstrip("/")
        quoted = Quoted().text
        sessions = f"{base}/apps/{quoted(self.spec.app)}/users/{quoted(self.spec.user)}/sessions"
        session = SessionSpec(
            start=Endpoint(url=sessions, body={}, id="id"),
            end=Endpoint(url=f"{sessions}/$session", method="DELETE"),
        )
        return msgspec.structs.replace(self.spec, url=f"{base}/run_sse", session=session, stream="sse")

    async def ready(
        self, client: Callable[[], httpx.AsyncClient], headers: httpx.Headers, tokens: AccessToken | None
    ) -> str:
        """The build `/version` names: `google-adk <version> (<language>)`, or ""."""
        data = await ServerInfo(self.spec, "/version").data(client, headers, tokens)
        if not isinstance(data, dict) or not isinstance(data.get("version"), str):
            return ""
        language = data.get("language")
        inner = f"({language})" if isinstance(language, str) and language else ""
        return Build(("google-adk", data["version"], inner)).text()

    def turned_down(self, failure: AgentFailure, body: object) -> None:
        """A framework server's refusal teaches nothing."""
        return None

    def body(self, ask: Ask) -> object:
        return {
            "appName": self.spec.app,
            "userId": self.spec.user,
            "sessionId": ask.session,
            "newMessage": {"role": "user", "parts": [{"text": ask.message}]},
            "streaming": True,
        }

    def headers(self) -> Mapping[str, str]:
        return {}

    def read(self, data: object) -> AgentReply:
        fold = RunEvents(self.shown)
        for event in data if isinstance(data, list) else ():
            fold.add(Event(name="message", data=event))
        return fold.reply()

    def fold(self) -> Fold:
        return RunEvents(self.shown)


class RunEvents:
    """ADK events folded: a partial event's text parts appended as they stream; a complete
    model event's text is the answer so far (the last one wins), its `functionCall` parts steps
    and its usage added up; a `functionResponse` part gives its call's result; an event with an
    `error` or `errorCode` breaks the stream (stream_broken, with its message)."""

    def __init__(self, shown: str) -> None:
        self._shown = shown
        self._partial: list[str] = []
        self._last = ""
        self._calls: dict[str, Call] = {}
        self._results: dict[str, str] = {}
        self._usage = Usage()

    def add(self, event: Event) -> str:
        data = event.data
        if not isinstance(data, dict):
            return ""
        if data.get("error") or data.get("errorCode"):
            said = data.get("errorMessage") or data.get("error")
            message = ErrorBody(msgspec.json.encode({"message": said}), Masked(())).message()
            raise AgentFailure(
                "stream_broken",
                f"the run at {self._shown} failed: {message or 'no reason given'}",
                message=message,
            )
        content = data.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        parts = [part for part in parts if isinstance(part, dict)] if isinstance(parts, list) else []
        text = "".join(
            part["text"] for part in parts if isinstance(part.get("text"), str) and not part.get("thought")
        )
        if data.get("partial"):
            self._partial.append(text)
            return text
        for part in parts:
            self.part(part)
        self.counted(data.get("usageMetadata"))
        if text and data.get("author") != "user":
            added = "" if self._partial else text
            self._last, self._partial = text, []
            return added
        return ""

    def part(self, part: dict[str, object]) -> None:
        call, response = part.get("functionCall"), part.get("functionResponse")
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            key = str(call.get("id") or len(self._calls))
            self._calls[key] = Call(name=call["name"], arguments=JsonText(call.get("args") or {}).text)
        if isinstance(response, dict):
            said = response.get("response")
            if isinstance(said, dict) and set(said) == {"result"}:
                said = said["result"]
            self._results[str(response.get("id") or "")] = JsonText(said).text

    def counted(self, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        given, made = usage.get("promptTokenCount"), usage.get("candidatesTokenCount")
        if isinstance(given, int) and isinstance(made, int):
            self._usage = Usage(
                input=(self._usage.input or 0) + given, output=(self._usage.output or 0) + made
            )

    def reply(self) -> AgentReply:
        text = self._last if self._last else "".join(self._partial)
        steps = tuple(
            msgspec.structs.replace(call, result=self._results.get(key, ""))
            for key, call in self._calls.items()
        )
        usage = self._usage if self._usage.input is not None else None
        return AgentReply(answer=Answer(text=text, usage=usage, steps=steps))
