"""Reading what an agent sent: the answer and what the next turn carries on, the text at the answer's
path or the failure it is, the steps it reported. JSON nested deeper than Python's stack (msgspec
decodes and encodes recursively) raises RecursionError, which the connection turns into
AgentFailure("bad_answer")."""

from __future__ import annotations

import httpx
import msgspec

from convy.play.agent import AgentFailure, Answer, Call, Step, Thought
from convy.play.template import Path, PathMissing

MOST_BYTES = 4 * 1024 * 1024
"""The largest answer read (4 MiB of body, or of a stream's events); more is
AgentFailure("answer_too_large")."""


class AgentReply(msgspec.Struct, frozen=True, kw_only=True):
    """An answer as read off the wire, and what the next turn carries on from it (`carry`: the
    Responses API's response id, A2A's contextId; "" for protocols that resend the dialogue)."""

    answer: Answer
    carry: str = ""


class AnswerText(msgspec.Struct, frozen=True):
    """The value found at an answer's path, as the text the agent said."""

    value: object
    where: str
    """How to name the place in an error: `the answer from <url> at 'reply.text'`."""

    def text(self) -> str:
        """The text; AgentFailure("bad_answer") when it is not a string or a number."""
        match self.value:
            case bool() | None:
                raise AgentFailure("bad_answer", f"{self.where} is not a string or a number")
            case str(text):
                return text
            case int() | float():
                return msgspec.json.encode(self.value).decode()
            case _:
                raise AgentFailure("bad_answer", f"{self.where} is not a string or a number")


class Spoken(msgspec.Struct, frozen=True):
    """An answer's text checked to say something: no text at all is AgentFailure("empty_answer")."""

    answer: Answer
    shown: str

    def checked(self) -> Answer:
        if not self.answer.text:
            raise AgentFailure("empty_answer", f"the answer from {self.shown} has no text")
        return self.answer


class Found(msgspec.Struct, frozen=True):
    """A path looked up in an answer's JSON without failing."""

    path: str

    def value(self, data: object) -> object:
        """The value at the path, None when nothing is there (or no path is set)."""
        if not self.path:
            return None
        try:
            return Path(self.path).found(data)
        except PathMissing:
            return None


class JsonText(msgspec.Struct, frozen=True):
    """A value of an agent's answer as text: a string as it is, null as "", anything else as JSON."""

    value: object

    @property
    def text(self) -> str:
        match self.value:
            case str():
                return self.value
            case None:
                return ""
            case _:
                return msgspec.json.encode(self.value).decode()


class Trace(msgspec.Struct, frozen=True):
    """The steps an answer reported (at the agent's `steps` path): a list whose strings are
    thoughts, whose objects with a `name` or `tool` (or an OpenAI `function`) are tool calls, whose
    objects with a `thought` text are thoughts, and whose other items are thoughts shown as JSON."""

    value: object

    def steps(self) -> tuple[Step, ...]:
        match self.value:
            case None:
                return ()
            case list():
                return tuple(Trace(item).step() for item in self.value)
            case _:
                return (self.step(),)

    def step(self) -> Step:
        match self.value:
            case str(text):
                return Thought(text=text)
            case {"function": {"name": str(name), **function}, **rest}:
                return Call(
                    name=name,
                    arguments=JsonText(function.get("arguments")).text,
                    result=JsonText(rest.get("result", rest.get("output"))).text,
                )
            case {"name": str(name), **rest} | {"tool": str(name), **rest}:
                return Call(
                    name=name,
                    arguments=JsonText(rest.get("arguments", rest.get("input"))).text,
                    result=JsonText(rest.get("result", rest.get("output"))).text,
                )
            case {"thought": str(text)}:
                return Thought(text=text)
            case _:
                return Thought(text=JsonText(self.value).text)


class Undecodable(msgspec.Struct, frozen=True):
    """A body msgspec could not decode as JSON, and why in words: its bytes are not UTF-8 (as JSON's
    must be), or they are but do not make JSON."""

    content: bytes

    def why(self) -> str:
        try:
            self.content.decode("utf-8")
        except UnicodeDecodeError:
            return "is not valid UTF-8"
        return "is not JSON"


class Limited(msgspec.Struct, frozen=True):
    """A response body read up to `most` bytes (decoded), never more."""

    most: int

    async def read(self, response: httpx.Response) -> bytes | None:
        """The body, or None when it is longer than `most` bytes (what was read is let go)."""
        length = response.headers.get("content-length", "")
        if length.isdecimal() and int(length) > self.most and not response.headers.get("content-encoding"):
            return None
        content = bytearray()
        async for chunk in response.aiter_bytes():
            content += chunk
            if len(content) > self.most:
                return None
        return bytes(content)
