"""The JSON a declarative HTTP agent is configured with: a dotted path into an answer
(`choices.0.message.content`), and a request body template whose placeholders `"$messages"`,
`"$message"`, `"$conversation"` and `"$session"` are filled in for each turn. Both walk JSON of no
fixed shape with `match`."""

from __future__ import annotations

import msgspec

from convy.errors import ConvyError
from convy.play.agent import Message


class PathMissing(ConvyError):
    """Nothing is at `path` in the JSON it was looked up in: `segment` is the part that was missing."""

    def __init__(self, path: str, segment: str) -> None:
        super().__init__(f"nothing at {path!r}: no {segment!r}")
        self.path = path
        self.segment = segment


class Path(msgspec.Struct, frozen=True):
    """A dotted path into JSON: object keys and list indexes (`0`, or `-1` for the last item)
    separated by dots, such as `reply.text` or `choices.0.message.content`."""

    text: str

    def __post_init__(self) -> None:
        if not self.text.strip():
            raise ValueError("a path must not be empty")
        if any(not segment.strip() for segment in self.text.split(".")):
            raise ValueError(f"the path {self.text!r} has an empty part (two dots, or a dot at an end)")

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.text.split("."))

    def found(self, data: object) -> object:
        """The value at this path in `data`; PathMissing naming the first part that is not there."""
        here = data
        for segment in self.segments:
            match here:
                case dict() if segment in here:
                    here = here[segment]
                case list() | tuple() if ListIndex(segment).within(len(here)):
                    here = here[int(segment)]
                case _:
                    raise PathMissing(self.text, segment)
        return here


class ListIndex(msgspec.Struct, frozen=True):
    """A part of a path as a list index, if it is one."""

    segment: str

    def within(self, length: int) -> bool:
        """Whether the part is an integer that indexes a list of `length` items."""
        digits = self.segment.removeprefix("-")
        if not digits.isdecimal() or not digits.isascii():
            return False
        return -length <= int(self.segment) < length


class Placeholders(msgspec.Struct, frozen=True):
    """What a body template's placeholders stand for in one turn."""

    messages: tuple[Message, ...]
    message: str
    conversation: str
    session: str = ""

    def put(self, value: object) -> object:
        """`value` with every string that is exactly a placeholder replaced, at any depth."""
        match value:
            case "$messages":
                return msgspec.to_builtins(list(self.messages))
            case "$message":
                return self.message
            case "$conversation":
                return self.conversation
            case "$session":
                return self.session
            case dict():
                return {key: self.put(item) for key, item in value.items()}
            case list() | tuple():
                return [self.put(item) for item in value]
            case _:
                return value


class Body(msgspec.Struct, frozen=True):
    """A JSON request body template. A string value that is exactly `"$messages"` becomes the
    dialogue so far (OpenAI-style `{"role", "content"}` objects), `"$message"` the user's latest
    message, `"$conversation"` the conversation's id and `"$session"` the agent's own session id
    (empty until it is known); everything else is sent as it is."""

    template: object

    def filled(
        self, messages: tuple[Message, ...], message: str, conversation: str, session: str = ""
    ) -> object:
        """The body to send for a turn."""
        return Placeholders(messages, message, conversation, session).put(self.template)
