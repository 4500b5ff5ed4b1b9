"""The JSON a declarative HTTP agent is configured with: a dotted path into an answer
(`choices.0.message.content`, `-1` for a list's last item), and a request body template whose
placeholders (convy.play.placeholders) are filled in for each request. Both walk JSON of no fixed
shape with `match`."""

from __future__ import annotations

import msgspec

from convy.errors import ConvyError
from convy.play.placeholders import BodyShape, Placeholders


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


class Body(msgspec.Struct, frozen=True):
    """A request body template (an object or a list, sent as JSON or form-encoded), filled in for
    each request by Placeholders: `"$messages"` is the dialogue so far (OpenAI-style `{"role",
    "content"}` objects) and `{"$messages": SHAPE}` the dialogue with each message in SHAPE (whose
    `$role`, `$content` and `$message_id` are that message's); `$message` the user's latest message,
    `$message_id` its id, `$conversation` the conversation's id, `$session` the agent's own session
    id and `$turn` the turn's number, whole values or inside strings; `$$` is a literal `$`. A value
    that needs `$session` before it is known is left out; everything else is sent as it is."""

    template: object

    def filled(self, placeholders: Placeholders) -> object:
        """The body to send for a turn."""
        return placeholders.put(self.template)

    def problem(self) -> str:
        """What is wrong with the template, said before any request after `body` ("" when nothing)."""
        if isinstance(self.template, str) and self.template != "$messages":
            return (
                "is a string: write the body as YAML (a mapping such as "
                '{"message": "$message"}), not as quoted JSON text'
            )
        return BodyShape(self.template).problem()
