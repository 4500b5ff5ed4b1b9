"""What the `$` placeholders of an agent file stand for in one turn, and how they are filled in:
a whole value by its value, inside a longer string by its text, `$$` as a literal `$`, and a
`{"$messages": SHAPE}` object as the dialogue with each message in that shape; a value that needs
`$session` while no session is known is left out of its object or list.

A whole string that is a placeholder becomes its value (`"$messages"` a list, `"$turn"` a number);
inside a longer string (`"u-$message_id"`) each is replaced by its text (`$messages`, a list, only as
a whole value); any other `$name` stays as it is."""

from __future__ import annotations

import re
from collections.abc import Callable

import msgspec

from convy.play.agent import Message

PLACEHOLDER = re.compile(r"\$(\$|[A-Za-z_][A-Za-z0-9_]*)")
"""`$$` (a literal `$`) or `$name`; a name that is no placeholder is left as it is."""
TURN = ("messages", "message", "message_id", "conversation", "session", "turn")
"""The placeholders of a turn."""
ITEM = ("role", "content", "message_id")
"""The placeholders of one message inside a `$messages` shape."""
EACH = "$messages"
"""The only key of an object that is the shape of each message of the dialogue."""


class LeftOut(msgspec.Struct, frozen=True):
    """A value that is not sent: it needs `$session` while no session is known."""


LEFT_OUT = LeftOut()


class ShapedMessage(msgspec.Struct, frozen=True, kw_only=True):
    """One message of the dialogue as a `$messages` shape fills it: `$role`, `$content` and its
    `$message_id` (the same id in every turn it is sent again)."""

    role: str = ""
    content: str = ""
    id: str = ""


OUTSIDE = ShapedMessage()
"""No message: the placeholders outside a `$messages` shape."""


class Placeholders(msgspec.Struct, frozen=True, kw_only=True):
    """What a template's placeholders stand for in one turn: the dialogue so far (`messages`,
    ending with the user's new `message`) and the id of each of its messages (`ids`, in order), the
    conversation's id, the agent's own session id ("" while none is known) and the 1-based turn."""

    messages: tuple[Message, ...] = ()
    message: str = ""
    conversation: str = ""
    session: str = ""
    turn: int = 1
    ids: tuple[str, ...] = ()

    @property
    def message_id(self) -> str:
        """The id of the newest message (the user's, in a turn); "" when there is none."""
        return self.ids[-1] if self.ids else ""

    def put(self, value: object, item: ShapedMessage = OUTSIDE) -> object:
        """`value` filled in at any depth (keys are never placeholders); LEFT_OUT when it needs a
        session that is not known."""
        match value:
            case str():
                return self.filled(value, item)
            case {"$messages": shape} if isinstance(value, dict) and len(value) == 1:
                return [self.put(shape, said) for said in self.said()]
            case dict():
                kept = {key: self.put(entry, item) for key, entry in value.items()}
                return {key: entry for key, entry in kept.items() if entry is not LEFT_OUT}
            case list() | tuple():
                return [entry for entry in (self.put(one, item) for one in value) if entry is not LEFT_OUT]
            case _:
                return value

    def said(self) -> tuple[ShapedMessage, ...]:
        ids = self.ids if len(self.ids) == len(self.messages) else ("",) * len(self.messages)
        return tuple(
            ShapedMessage(role=message.role, content=message.content, id=id)
            for message, id in zip(self.messages, ids, strict=True)
        )

    def filled(self, text: str, item: ShapedMessage = OUTSIDE) -> object:
        """A string value filled in: a whole placeholder as its value, else the text with each
        placeholder replaced."""
        if self.unknown_session(text):
            return LEFT_OUT
        whole = PLACEHOLDER.fullmatch(text)
        if whole is not None and whole.group(1) != "$":
            name = whole.group(1)
            if name == "messages" and item is OUTSIDE:
                return msgspec.to_builtins(list(self.messages))
            if name == "turn":
                return self.turn
        return self.text(text, item)

    def text(
        self,
        text: str,
        item: ShapedMessage = OUTSIDE,
        quoted: Callable[[str], str] = str,
        escapes: bool = True,
    ) -> str:
        """`text` with each placeholder replaced by its text (passed through `quoted`: a URL's
        percent-encoding), `$$` by `$` (kept as it is without `escapes`: a header's value, which
        holds secrets read from the environment), and any other `$name` left as it is."""
        values = self.values(item)

        def one(found: re.Match[str]) -> str:
            name = found.group(1)
            if name == "$":
                return "$" if escapes else "$$"
            return quoted(values[name]) if name in values else found.group(0)

        return PLACEHOLDER.sub(one, text)

    def values(self, item: ShapedMessage) -> dict[str, str]:
        values = {
            "message": self.message,
            "message_id": self.message_id,
            "conversation": self.conversation,
            "session": self.session,
            "turn": str(self.turn),
        }
        if item is not OUTSIDE:
            values.update(role=item.role, content=item.content, message_id=item.id)
        return values

    def unknown_session(self, text: str) -> bool:
        """Whether `text` needs the session id while none is known."""
        return not self.session and "session" in Names(text).used()


class Names(msgspec.Struct, frozen=True):
    """The placeholder names a text uses (`$$` is none)."""

    text: str

    def used(self) -> tuple[str, ...]:
        return tuple(name for name in PLACEHOLDER.findall(self.text) if name != "$")


class BodyShape(msgspec.Struct, frozen=True):
    """A body template checked before any request: what is wrong with it ("" when nothing)."""

    template: object

    def problem(self, inside: bool = False) -> str:
        match self.template:
            case str():
                return self.misplaced(self.template, inside)
            case {"$messages": shape} if isinstance(self.template, dict) and len(self.template) == 1:
                if inside:
                    return "has a `$messages` shape inside another"
                return BodyShape(shape).problem(inside=True)
            case dict() if EACH in self.template:
                return (
                    "has `$messages` as a key beside others: as a key it is the shape of each "
                    "message, its object's only key"
                )
            case dict():
                return next(
                    (p for p in (BodyShape(v).problem(inside) for v in self.template.values()) if p), ""
                )
            case list() | tuple():
                return next((p for p in (BodyShape(v).problem(inside) for v in self.template) if p), "")
            case _:
                return ""

    def misplaced(self, text: str, inside: bool) -> str:
        if inside and text == EACH:
            return "has `$messages` inside a `$messages` shape"
        return ""
