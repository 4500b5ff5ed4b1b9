"""Reading what an agent sent: the answer and what the next turn carries on, the text at the answer's
path or the failure it is, the steps it reported. JSON nested deeper than Python's stack (msgspec
decodes and encodes recursively) raises RecursionError, which the connection turns into
AgentFailure("bad_answer")."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

import httpx
import msgspec

from convy.play.agent import AgentFailure, Answer, Call, Step, Thought
from convy.play.template import Path, PathMissing

MOST_BYTES = 4 * 1024 * 1024
"""The largest answer read (4 MiB of body, or of a stream's events); more is
AgentFailure("answer_too_large")."""
MOST_RAW = 2000
"""The most characters of an unreadable answer a `bad_answer` attempt keeps as `raw`."""
MOST_KEYS = 10
"""The most top-level keys of an answer a wrong answer path's message lists."""
NOTHING_AT = "has nothing at"
"""What a `bad_answer` detail says when the answer path found nothing (MissingAnswer)."""


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


class MissingAnswer(msgspec.Struct, frozen=True):
    """An answer in which the answer path (`path`, from `setting`: `agent-answer`, or the agent
    file's `answer`) finds nothing, described so the path can be fixed: the setting to check, the
    answer's top-level keys (names only, at most 10) and, where a path to a text in the answer is
    close to it, that whole path ("did you mean `reply.text`?")."""

    path: str
    data: object
    setting: str
    shown: str

    def failure(self) -> AgentFailure:
        return AgentFailure("bad_answer", self.text())

    def text(self) -> str:
        close = self.close()
        meant = f" (did you mean `{close}`?)" if close else ""
        said = f"the answer from {self.shown} {NOTHING_AT} `{self.path}`{meant}; check {self.setting}"
        match self.data:
            case dict() if self.data:
                keys = [Key(key).shown for key in list(self.data)[:MOST_KEYS]]
                more = len(self.data) - MOST_KEYS
                keys += [f"{more} more"] if more > 0 else []
                return f"{said}: its top-level keys are {', '.join(keys)}"
            case dict():
                return f"{said}: it is an empty object"
            case list():
                return f"{said}: it is a list of {len(self.data)}, not an object"
            case _:
                return f"{said}: it is {JsonText(self.data).text[:40]!r}, not an object"

    def close(self) -> str:
        """The path of a text in the answer close to `path`: the only text under the deepest part of
        `path` the answer has, else one ending as `path` does, else the closest by difflib; ""."""
        segments = self.path.split(".")
        for depth in range(len(segments) - 1, 0, -1):
            prefix = ".".join(segments[:depth])
            if isinstance(Found(prefix).value(self.data), dict | list):
                under = [path for path in Texts(self.data).paths() if path.startswith(prefix + ".")]
                if len(under) == 1:
                    return under[0]
                return next(iter(difflib.get_close_matches(self.path, under, n=1, cutoff=0.6)), "")
        texts = list(Texts(self.data).paths())
        ending = [path for path in texts if path.endswith("." + self.path)]
        if len(ending) == 1:
            return ending[0]
        return next(iter(difflib.get_close_matches(self.path, texts, n=1, cutoff=0.6)), "")


class Key(msgspec.Struct, frozen=True):
    """A key of an agent's answer as a message names it: in a code span, at most 40 characters."""

    key: object

    @property
    def shown(self) -> str:
        text = str(self.key).replace("`", "'")
        return f"`{text[:40]}`"


class Texts(msgspec.Struct, frozen=True):
    """The dotted paths of the texts (strings) in an answer's JSON, shallow ones first: at most 200,
    6 parts deep, the first 5 items of each list."""

    data: object

    def paths(self) -> Iterator[str]:
        found = 0
        level: list[tuple[str, object]] = [("", self.data)]
        for _ in range(6):
            deeper: list[tuple[str, object]] = []
            for prefix, value in level:
                items: list[tuple[object, object]] = []
                if isinstance(value, dict):
                    items = list(value.items())
                elif isinstance(value, list):
                    items = list(enumerate(value[:5]))
                for key, item in items:
                    path = f"{prefix}.{key}" if prefix else str(key)
                    if isinstance(item, str):
                        found += 1
                        yield path
                        if found >= 200:
                            return
                    else:
                        deeper.append((path, item))
            level = deeper


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
    thoughts, whose objects with a `name` or `tool` (or an OpenAI `function`) are tool calls (their
    `arguments`, `args` or `input`; their `result` or `output`), whose objects with a `thought` text
    are thoughts, and whose other items are thoughts shown as JSON."""

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
                given = next((rest[key] for key in ("arguments", "args", "input") if key in rest), None)
                return Call(
                    name=name,
                    arguments=JsonText(given).text,
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


class Relocated(msgspec.Struct, frozen=True):
    """A failure that names the agent's URL as its file writes it (`written`, placeholders and all)
    said with the URL the turn was sent to (`sent`, placeholders filled in) instead."""

    written: str
    sent: str

    def failure(self, failure: AgentFailure) -> AgentFailure:
        if self.written == self.sent or self.written not in failure.detail:
            return failure
        return AgentFailure(
            failure.reason,
            failure.detail.replace(self.written, self.sent),
            status=failure.status,
            message=failure.message,
            reached=failure.reached,
            raw=failure.raw,
        )
