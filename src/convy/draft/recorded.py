"""What a recording holds once read: the messages of model calls, the spans that link them, and the
conversations they make."""

from __future__ import annotations

import msgspec

ROLES = {
    "user": "user",
    "human": "user",
    "system": "system",
    "developer": "system",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}
"""The roles recordings name, as ours: user, system, assistant, tool."""


class Utterance(msgspec.Struct, frozen=True):
    """One message of a recorded dialogue: its role (user, system, assistant, tool) and its text."""

    role: str
    text: str


class SpanLink(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """A span as far as conversations need it, kept small (a large export has many): its parent's
    key (0 none), the conversation id it carries ("" none), its start (nanoseconds) and the
    attributes `--where` asks about, as (name, value) pairs."""

    parent: int = 0
    session: str = ""
    at: int = 0
    kept: tuple[tuple[str, str], ...] = ()


class ModelCall(msgspec.Struct, frozen=True, kw_only=True):
    """One model call: what it was asked and what it answered, where it was recorded (`origin`: a
    file or URL), its trace and span, when it started (nanoseconds since 1970; 0 unknown) and the
    order it was read in (for calls of the same time)."""

    origin: str
    trace: str = ""
    span: str = ""
    at: int = 0
    order: int = 0
    asked: tuple[Utterance, ...] = ()
    answered: tuple[Utterance, ...] = ()

    @property
    def said(self) -> tuple[Utterance, ...]:
        """What it was asked, the system's messages left out."""
        return tuple(message for message in self.asked if message.role != "system")

    @property
    def key(self) -> int:
        """The span's key among every span read (its trace and span id hashed)."""
        return hash((self.trace, self.span))


class Recorded(msgspec.Struct, frozen=True, kw_only=True):
    """One recorded conversation: its messages in order (the system's left out), where it came from
    (`origin`, and in a run folder `run`), its trace and session ("" unknown), its place among the
    conversations of its source (`index`), when it was last active (`latest`, for `--limit`) and the
    attributes or metadata `--where` looks at."""

    origin: str = ""
    run: str = ""
    trace: str = ""
    session: str = ""
    index: int = 0
    latest: float = 0.0
    messages: tuple[Utterance, ...] = ()
    kept: dict[str, str] = msgspec.field(default_factory=dict)

    @property
    def turns(self) -> tuple[str, ...]:
        """The user's messages, in order: the scenario's turns."""
        return tuple(
            message.text for message in self.messages if message.role == "user" and message.text.strip()
        )
