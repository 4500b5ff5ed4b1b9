"""The OpenAI Responses API (see docs/agents.md) as a dialect: each turn sends only the user's message as
`input`, the server keeps the conversation (`store`) and the previous answer's id goes back as
`previous_response_id`.

A response object is read for the text of its messages' `output_text` parts, its function calls as
steps, its usage and its id; a streamed response is folded from the `response.output_text.delta`
events' text and the id and usage of the `response.completed` event."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from convy.play.agent import AgentFailure, Answer, Call, Step
from convy.play.errorbody import ErrorBody, Masked
from convy.play.wire.dialect import Ask, Fold, Settled
from convy.play.wire.reading import AgentReply, Found, JsonText
from convy.play.wire.spec import AgentSpec
from convy.play.wire.stream import Event
from convy.play.wire.tokens import TokenPaths

RESPONSES_TOKENS = TokenPaths(input="usage.input_tokens", output="usage.output_tokens")
TEXT_DELTA = "response.output_text.delta"
ENDED = ("response.completed", "response.incomplete")
"""The events that end a response that was given, with the whole response in them."""
FAILED = ("error", "response.failed")


class Responses(msgspec.Struct, Settled, frozen=True):
    """The OpenAI Responses API (`POST …/v1/responses`, and the gateways that serve it): the user's
    message as `input`, `model` when set, `store: true`, and from the second turn the id of the
    previous answer as `previous_response_id` (the server keeps the dialogue, not convy)."""

    spec: AgentSpec
    shown: str

    def body(self, ask: Ask) -> object:
        body: dict[str, object] = {}
        if self.spec.model:
            body["model"] = self.spec.model
        body["input"] = ask.message
        body["store"] = True
        if ask.carry:
            body["previous_response_id"] = ask.carry
        if self.spec.stream == "sse":
            body["stream"] = True
        return body

    def headers(self) -> Mapping[str, str]:
        return {}

    def read(self, data: object) -> AgentReply:
        output = Output(data, self.shown).checked()
        return AgentReply(answer=output.answer(), carry=output.id)

    def fold(self) -> Fold:
        return ResponseEvents(self.shown)


class Output(msgspec.Struct, frozen=True):
    """A response object of the Responses API (a whole answer, or the one a stream's last event
    holds): its `output` items, `usage`, `id` and `status`."""

    data: object
    shown: str

    @property
    def fields(self) -> dict[str, object]:
        return self.data if isinstance(self.data, dict) else {}

    @property
    def items(self) -> list[dict[str, object]]:
        items = self.fields.get("output")
        return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []

    @property
    def id(self) -> str:
        given = self.fields.get("id")
        return given if isinstance(given, str) else ""

    def checked(self) -> Output:
        """The response; AgentFailure("response_failed") with the service's message when it failed
        (status `failed`, or an error and no output), AgentFailure("bad_answer") when it is no
        response."""
        fields = self.fields
        if fields.get("status") == "failed" or (fields.get("error") and "output" not in fields):
            message = Failure(fields).message()
            raise AgentFailure(
                "response_failed",
                f"the response from {self.shown} failed: {message or 'no reason given'}",
                message=message,
            )
        if not isinstance(fields.get("output"), list):
            raise AgentFailure("bad_answer", f"the answer from {self.shown} has no `output` list")
        return self

    def text(self) -> str:
        """The text of every `output_text` part of every `message` item, in order."""
        parts: list[str] = []
        for item in self.items:
            content = item.get("content")
            if item.get("type") == "message" and isinstance(content, list):
                parts += [
                    part["text"]
                    for part in content
                    if isinstance(part, dict)
                    and part.get("type") == "output_text"
                    and isinstance(part.get("text"), str)
                ]
        return "".join(parts)

    def steps(self) -> tuple[Step, ...]:
        """Each `function_call` item as a Call."""
        return tuple(FunctionCall(item).step() for item in self.items if item.get("type") == "function_call")

    def answer(self) -> Answer:
        return Answer(text=self.text(), usage=RESPONSES_TOKENS.usage(self.data), steps=self.steps())


class Failure(msgspec.Struct, frozen=True):
    """A failed response, an `error` event or a `response.failed` event (or a gateway's
    `{"error": {"message"}}`): what it says."""

    data: object

    def message(self) -> str:
        """Its message, on one line; "" when it gives none."""
        for path in ("error.message", "response.error.message", "message"):
            said = Found(path).value(self.data)
            if isinstance(said, str) and said.strip():
                return ErrorBody(msgspec.json.encode({"message": said}), Masked(())).message()
        return ""


class FunctionCall(msgspec.Struct, frozen=True):
    """A `function_call` output item: the function's name and its arguments (a JSON string)."""

    item: dict[str, object]

    def step(self) -> Call:
        name = self.item.get("name")
        return Call(
            name=name if isinstance(name, str) else "", arguments=JsonText(self.item.get("arguments")).text
        )


class ResponseEvents:
    """A streamed response folded: the `delta` of each `response.output_text.delta` event appended
    (the event's kind read from its data's `type`, as servers may leave out the SSE name); the id,
    usage and function calls from the response of `response.completed` (and its text when no delta
    came); an `error` or `response.failed` event breaks the stream (stream_broken, with its
    message)."""

    def __init__(self, shown: str) -> None:
        self._shown = shown
        self._parts: list[str] = []
        self._id = ""
        self._ended = Output(None, shown)

    def add(self, event: Event) -> str:
        data = event.data
        if not isinstance(data, dict):
            return ""
        if data.get("error") or any(event.named(kind) for kind in FAILED):
            message = Failure(data).message()
            raise AgentFailure(
                "stream_broken",
                f"the stream from {self._shown} broke: {message or 'the response failed'}",
                message=message,
            )
        response = data.get("response")
        if isinstance(response, dict) and isinstance(response.get("id"), str) and response["id"]:
            self._id = response["id"]
        if event.named(TEXT_DELTA):
            delta = data.get("delta")
            if isinstance(delta, str) and delta:
                self._parts.append(delta)
                return delta
            return ""
        if any(event.named(kind) for kind in ENDED) and isinstance(response, dict):
            self._ended = Output(response, self._shown)
            if not self._parts:
                text = self._ended.text()
                if text:
                    self._parts.append(text)
                    return text
        return ""

    def reply(self) -> AgentReply:
        ended = self._ended
        answer = Answer(
            text="".join(self._parts), usage=RESPONSES_TOKENS.usage(ended.data), steps=ended.steps()
        )
        return AgentReply(answer=answer, carry=self._id)
