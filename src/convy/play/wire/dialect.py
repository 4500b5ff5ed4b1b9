"""What a wire protocol must do, whichever it is: make a turn's request body and extra headers,
read its answer whole or event by event, have the turn sent again once when a refusal taught how to
speak to the agent, and ask after an answer not done yet. The dialects: chat.py, responses.py,
a2a.py, and for frameworks' own servers langgraph.py and adk.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

import httpx
import msgspec

from convy.errors import ConvyError
from convy.play.agent import AgentFailure, Message
from convy.play.placeholders import Placeholders
from convy.play.wire.reading import AgentReply
from convy.play.wire.stream import Event

if TYPE_CHECKING:
    from convy.play.wire.oauth import AccessToken


class Ask(msgspec.Struct, frozen=True, kw_only=True):
    """What one turn's request is made of: the dialogue so far ending with the user's new
    `message`, the id of each of its messages (`ids`, the same id every time a message is sent
    again), the conversation's id (`$conversation`), the agent's own session id (`$session`, ""
    until known), the 1-based `turn` and what the previous answer handed on (`carry`, "" on the
    first turn)."""

    dialogue: tuple[Message, ...]
    message: str
    conversation: str
    session: str = ""
    carry: str = ""
    turn: int = 1
    ids: tuple[str, ...] = ()

    def placeholders(self) -> Placeholders:
        """What a template's placeholders stand for in this turn."""
        return Placeholders(
            messages=self.dialogue,
            message=self.message,
            conversation=self.conversation,
            session=self.session,
            turn=self.turn,
            ids=self.ids,
        )


class Resend(ConvyError):
    """The dialect learned how the agent must be spoken to (A2A's version) from an answer that
    refused the turn unprocessed: the turn is sent again, once, in the form learned."""


class Pending(ConvyError):
    """The answer is a task still at work (A2A's `submitted` or `working`): `body` is the JSON of
    the request that asks after it (`tasks/get`), `state` the state it was left in. The turn asks
    again, with a backoff, until it is done or the turn's timeout has passed."""

    def __init__(self, body: object, state: str) -> None:
        super().__init__(f"the task is still {state}")
        self.body = body
        self.state = state


class Fold(Protocol):
    """A streamed answer folded event by event into one AgentReply."""

    def add(self, event: Event) -> str:
        """Take one event; the text it added to the answer ("" when none)."""
        ...

    def reply(self) -> AgentReply:
        """The answer the events made, once the stream ended; Pending when it left a task at work."""
        ...


class Dialect(Protocol):
    """One wire protocol as an agent speaks it; shared by every conversation of a run (what it
    learns, it learns once)."""

    def body(self, ask: Ask) -> object:
        """The JSON body of a turn's request."""
        ...

    def headers(self) -> Mapping[str, str]:
        """Headers every request of the protocol carries besides the agent's own."""
        ...

    def read(self, data: object) -> AgentReply:
        """A whole JSON answer read; AgentFailure when it holds no answer; Resend when it refused
        the turn in a way that taught the dialect how to send it; Pending when it is a task still
        at work."""
        ...

    def fold(self) -> Fold:
        """A new fold for one streamed answer."""
        ...

    async def ready(
        self, client: Callable[[], httpx.AsyncClient], headers: httpx.Headers, tokens: AccessToken | None
    ) -> str:
        """What is asked once before the first conversation (A2A's card, a framework server's info);
        the build the agent names there, or ""."""
        ...

    def turned_down(self, failure: AgentFailure, body: object) -> None:
        """What the dialect learns from a turn (`body`) refused with an HTTP error `failure`."""
        ...


class Settled:
    """What a dialect that learns nothing says of it: no build asked for before the first
    conversation, nothing learned from a refused turn."""

    __slots__ = ()

    async def ready(
        self, client: Callable[[], httpx.AsyncClient], headers: httpx.Headers, tokens: AccessToken | None
    ) -> str:
        return ""

    def turned_down(self, failure: AgentFailure, body: object) -> None:
        return None
