"""The dialects that send the dialogue so far with every turn: a JSON body template of the agent
file's (its answer at a dotted path, or streamed as deltas at a path), and OpenAI chat completions
(`model` sent when set; streamed with `stream: true` and usage asked for, tool-call deltas assembled
into steps)."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from convy.play.agent import AgentFailure, Answer, Call, Step, Usage
from convy.play.errorbody import ErrorBody, Masked
from convy.play.template import Body, Path, PathMissing
from convy.play.wire.dialect import Ask, Fold, Settled
from convy.play.wire.reading import AgentReply, AnswerText, Found, JsonText, MissingAnswer, Trace
from convy.play.wire.spec import AgentSpec
from convy.play.wire.stream import Event
from convy.play.wire.tokens import OPENAI_TOKENS

CHAT_BODY: object = {"messages": "$messages"}
CHAT_ANSWER = "choices.0.message.content"
CHAT_DELTA = "choices.0.delta.content"
CHAT_STEPS = "choices.0.message.tool_calls"


ANSWER_SETTING = "agent-answer (or the agent file's `answer`)"
"""The setting a wrong answer path names when the agent does not say where its path came from."""


class Template(msgspec.Struct, Settled, frozen=True):
    """The template protocol: the agent file's `body` filled in for each turn, the text at `answer`
    (or, streamed, the `delta`s of the events named `event`, appended or the last one); `setting`
    is where the answer path was set, as a wrong path's message names it."""

    spec: AgentSpec
    shown: str
    setting: str = ANSWER_SETTING

    def body(self, ask: Ask) -> object:
        template = self.spec.body if self.spec.body is not None else CHAT_BODY
        return Body(template).filled(ask.placeholders())

    def headers(self) -> Mapping[str, str]:
        return {}

    def read(self, data: object) -> AgentReply:
        whole = WholeAnswer(
            self.spec.answer or CHAT_ANSWER, self.spec.steps, self.spec, self.shown, self.setting
        )
        return AgentReply(answer=whole.read(data))

    def fold(self) -> Fold:
        return Deltas(self.spec, self.spec.delta, self.spec.steps)


class OpenAiChat(msgspec.Struct, Settled, frozen=True):
    """OpenAI chat completions (and every server compatible with it): the dialogue as `messages`
    (or the file's body), `model` when set; streamed as chunks whose `choices.0.delta` hold the
    text and tool-call pieces, and a last chunk with the usage. `setting` as Template's."""

    spec: AgentSpec
    shown: str
    setting: str = ANSWER_SETTING

    def body(self, ask: Ask) -> object:
        body = Template(self.spec, self.shown).body(ask)
        if isinstance(body, dict):
            if self.spec.model:
                body.setdefault("model", self.spec.model)
            if self.spec.stream == "sse":
                body["stream"] = True
                body["stream_options"] = {"include_usage": True}
        return body

    def headers(self) -> Mapping[str, str]:
        return {}

    def read(self, data: object) -> AgentReply:
        spec, steps = self.spec, self.spec.steps or CHAT_STEPS
        answer = WholeAnswer(spec.answer or CHAT_ANSWER, steps, spec, self.shown, self.setting)
        return AgentReply(answer=answer.read(data))

    def fold(self) -> Fold:
        if self.spec.delta or self.spec.steps:
            return Deltas(self.spec, self.spec.delta or CHAT_DELTA, self.spec.steps)
        return ChatChunks(self.shown)


class WholeAnswer(msgspec.Struct, frozen=True):
    """A whole JSON answer read at its paths: the text at `answer`, the steps at `steps`, the tokens
    at the spec's token paths. A null text is no text (empty_answer, once checked); no text at the
    path at all is a wrong path (MissingAnswer), named as set at `setting`."""

    answer: str
    steps: str
    spec: AgentSpec
    shown: str
    setting: str = ANSWER_SETTING

    def text(self, data: object) -> str:
        try:
            value = Path(self.answer).found(data)
        except PathMissing:
            raise MissingAnswer(self.answer, data, self.setting, self.shown).failure() from None
        if value is None:
            return ""
        return AnswerText(value, f"the answer from {self.shown} at {self.answer!r}").text()

    def read(self, data: object) -> Answer:
        text = self.text(data)
        steps: tuple[Step, ...] = ()
        if self.steps:
            steps = Trace(Found(self.steps).value(data)).steps()
        return Answer(text=text, usage=self.spec.tokens.usage(data), steps=steps)


class Deltas:
    """A stream folded by paths: the text at `delta` of each event named `event` whose data has the
    values of `where` (appended, or the last one with `join: last`); the tokens and the steps in the
    last event that has them."""

    def __init__(self, spec: AgentSpec, delta: str, steps: str) -> None:
        self._spec = spec
        self._delta = delta
        self._steps = steps
        self._parts: list[str] = []
        self._usage: Usage | None = None
        self._found: tuple[Step, ...] = ()

    def add(self, event: Event) -> str:
        usage = self._spec.tokens.usage(event.data)
        if usage is not None:
            self._usage = usage
        if self._steps:
            steps = Found(self._steps).value(event.data)
            if steps is not None:
                self._found = Trace(steps).steps()
        if not event.named(self._spec.event) or not event.has(self._spec.where):
            return ""
        value = Found(self._delta).value(event.data)
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            return ""
        text = JsonText(value).text
        if self._spec.join == "last":
            self._parts = [text]
        else:
            self._parts.append(text)
        return text

    def reply(self) -> AgentReply:
        return AgentReply(answer=Answer(text="".join(self._parts), usage=self._usage, steps=self._found))


class ToolCall:
    """A tool call assembled from its streamed pieces."""

    def __init__(self) -> None:
        self.name = ""
        self.arguments = ""


class ChatChunks:
    """An OpenAI chat completions stream folded: `choices.0.delta.content` appended; the pieces of
    `choices.0.delta.tool_calls` assembled by their index into Calls; the usage from the chunk that
    has it; a chunk with an `error` breaks the stream (stream_broken, with its message)."""

    def __init__(self, shown: str) -> None:
        self._shown = shown
        self._parts: list[str] = []
        self._calls: dict[int, ToolCall] = {}
        self._usage: Usage | None = None

    def add(self, event: Event) -> str:
        data = event.data
        if not isinstance(data, dict):
            return ""
        if data.get("error"):
            message = ErrorBody(msgspec.json.encode(data), Masked(())).message()
            raise AgentFailure(
                "stream_broken", f"the stream from {self._shown} broke: {message}", message=message
            )
        usage = OPENAI_TOKENS.usage(data)
        if usage is not None:
            self._usage = usage
        delta = Found("choices.0.delta").value(data)
        if not isinstance(delta, dict):
            return ""
        for piece in delta.get("tool_calls") or ():
            if isinstance(piece, dict):
                self.assemble(piece)
        text = delta.get("content")
        if isinstance(text, str) and text:
            self._parts.append(text)
            return text
        return ""

    def assemble(self, piece: dict[str, object]) -> None:
        index = piece.get("index", len(self._calls))
        call = self._calls.setdefault(index if isinstance(index, int) else len(self._calls), ToolCall())
        function = piece.get("function")
        if isinstance(function, dict):
            name, arguments = function.get("name"), function.get("arguments")
            if isinstance(name, str):
                call.name += name
            if isinstance(arguments, str):
                call.arguments += arguments

    def reply(self) -> AgentReply:
        steps = tuple(
            Call(name=call.name, arguments=call.arguments) for _, call in sorted(self._calls.items())
        )
        return AgentReply(answer=Answer(text="".join(self._parts), usage=self._usage, steps=steps))
