"""What convy plays against: the agent interface, what one turn of a conversation gives back (the
answer, its token usage, the steps the agent reported), how a turn fails, and the wrappers every
agent is played through — a time limit on opening, each turn and closing, and a place per
conversation with turns sent within the agent's rate and patience."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from types import TracebackType
from typing import Literal, Protocol, Self

from convy.data import Data, Tagged
from convy.errors import ConvyError
from convy.play.busy import Places
from convy.play.errorbody import Masked


class Message(Data, frozen=True, kw_only=True):
    """One message of an OpenAI-style dialogue."""

    role: Literal["system", "user", "assistant"]
    content: str


class Usage(Data, frozen=True, kw_only=True):
    """Tokens a service reported for one request; a count nobody reported is None (unknown)."""

    input: int | None = None
    output: int | None = None

    def plus(self, other: Usage | None) -> Usage:
        """Both requests' tokens added up; a count neither reported stays unknown."""
        if other is None:
            return self
        return Usage(
            input=None
            if self.input is None and other.input is None
            else (self.input or 0) + (other.input or 0),
            output=None
            if self.output is None and other.output is None
            else (self.output or 0) + (other.output or 0),
        )


class Thought(Tagged, frozen=True, kw_only=True, tag="thought"):
    """A step of the agent's that is text: reasoning, a note."""

    text: str


class Call(Tagged, frozen=True, kw_only=True, tag="call"):
    """A tool call the agent reported making, with its arguments and result as text."""

    name: str
    arguments: str = ""
    result: str = ""


Step = Thought | Call


class Answer(Data, frozen=True, kw_only=True):
    """What the agent said in one turn, with the tokens and steps it reported."""

    text: str
    usage: Usage | None = None
    steps: tuple[Step, ...] = ()
    first: float | None = None
    """Seconds from sending the turn to the first piece of text of a streamed answer; None when the
    answer was not streamed."""


class AgentFailure(ConvyError):
    """The agent failed a turn (HTTP 500, a timeout, an answer convy cannot read...): the attempt is
    Failed with `reason` (a short snake_case code such as `http_500`, `timeout`, `bad_answer`)."""

    def __init__(
        self,
        reason: str,
        detail: str = "",
        *,
        status: int = 0,
        message: str = "",
        reached: bool = True,
        raw: str = "",
    ) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.reached = reached
        """False when the request never reached the agent (no connection could be made)."""
        self.status = status
        """The HTTP status of the answer that failed the turn; 0 where there was none."""
        self.message = message
        """The agent's own words: the message of its error answer (one line, secrets masked)."""
        self.raw = raw
        """A `bad_answer`'s answer as it came (its first 2,000 characters, secrets masked); "" else."""

    def hiding(self, masked: Masked) -> AgentFailure:
        """The same failure with every secret of `masked` hidden in all it says."""
        return AgentFailure(
            self.reason,
            masked.text(self.detail),
            status=self.status,
            message=masked.text(self.message),
            reached=self.reached,
            raw=masked.text(self.raw),
        )


class SessionNotEnded(ConvyError):
    """Closing a conversation could not end the agent's own session (`session.end` failed): a
    warning on the attempt, never a failure — the dialogue already happened."""


class Conversation(Protocol):
    """One open conversation with an agent, used as `async with`; it keeps its own history."""

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None: ...

    async def reply(self, text: str) -> Answer:
        """The agent's answer to the user's next message `text`."""
        ...


class Agent(Protocol):
    """Anything a conversation can be had with, and what a run asks of it besides: what it does
    once before the first conversation, what it keeps while a run plays, the secrets it holds and
    the model it answers with. Plain gives an agent with none of these their empty forms; a
    project's Python agent gets them from PythonAgent."""

    def conversation(self, key: str) -> Conversation:
        """A new conversation, not yet open; `key` is stable for one attempt."""
        ...

    async def ready(self) -> str:
        """What is done once before the first conversation (a token fetched, a card read): the
        build the agent names itself, or ""; ConfigurationError when it cannot be done."""
        ...

    def kept(self) -> contextlib.AbstractAsyncContextManager[None]:
        """The run's scope: while it is open, what the agent keeps between conversations (its
        connections) is kept."""
        ...

    def secrets(self) -> tuple[str, ...]:
        """The values the agent holds that must never be shown (header values, a client secret)."""
        ...

    def model(self) -> tuple[str, str]:
        """The model the agent answers with and the URL it is reached at, as prices are looked up
        by them; "" for what is not known."""
        ...


class Plain:
    """What an agent with nothing more to it than its conversations has of the rest of an Agent:
    nothing to do first, nothing kept, no secrets, no model known."""

    async def ready(self) -> str:
        return ""

    def kept(self) -> contextlib.AbstractAsyncContextManager[None]:
        return contextlib.nullcontext()

    def secrets(self) -> tuple[str, ...]:
        return ()

    def model(self) -> tuple[str, str]:
        return ("", "")


class PythonAgent(Plain):
    """A project's Python agent (agents/<name>.py's `agent`): its conversations, and nothing else a
    run asks of an agent."""

    def __init__(self, conversations: Callable[[str], Conversation]) -> None:
        self._conversations = conversations

    def conversation(self, key: str) -> Conversation:
        return self._conversations(key)


class Forwarded:
    """A wrapper's side of an Agent that is its agent's: what it does first, keeps, holds and
    answers with."""

    def __init__(self, agent: Agent) -> None:
        self._agent = agent

    async def ready(self) -> str:
        return await self._agent.ready()

    def kept(self) -> contextlib.AbstractAsyncContextManager[None]:
        return self._agent.kept()

    def secrets(self) -> tuple[str, ...]:
        return self._agent.secrets()

    def model(self) -> tuple[str, str]:
        return self._agent.model()


class WrappedAgent(Forwarded):
    """The same agent, each of its conversations wrapped by `wrap` as it is made."""

    def __init__(self, agent: Agent, wrap: Callable[[Conversation], Conversation]) -> None:
        super().__init__(agent)
        self._wrap = wrap

    def conversation(self, key: str) -> Conversation:
        return self._wrap(self._agent.conversation(key))


class TimeLimited(WrappedAgent):
    """The same agent with a time limit, in seconds, on opening a conversation, on each turn, and on
    closing: one that runs out is AgentFailure("timeout")."""

    def __init__(self, agent: Agent, seconds: float) -> None:
        if seconds <= 0:
            raise ValueError("a time limit must be longer than 0 seconds")
        super().__init__(agent, functools.partial(TimeLimitedConversation, seconds=seconds))


class TimeLimitedConversation:
    """A conversation whose opening, turns and closing each have `seconds` to finish."""

    def __init__(self, conversation: Conversation, seconds: float) -> None:
        self._conversation = conversation
        self._seconds = seconds

    async def __aenter__(self) -> Self:
        try:
            async with asyncio.timeout(self._seconds):
                await self._conversation.__aenter__()
        except TimeoutError:
            raise AgentFailure("timeout", f"opening the conversation took over {self._seconds:g} s") from None
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        try:
            async with asyncio.timeout(self._seconds):
                await self._conversation.__aexit__(kind, error, trace)
        except TimeoutError:
            raise AgentFailure("timeout", f"closing the conversation took over {self._seconds:g} s") from None

    async def reply(self, text: str) -> Answer:
        try:
            async with asyncio.timeout(self._seconds):
                return await self._conversation.reply(text)
        except TimeoutError:
            raise AgentFailure("timeout", f"no answer within {self._seconds:g} s") from None


class QueuedAgent(WrappedAgent):
    """The same agent within its Places: each conversation holds one place from opening to closing
    (so at most `at_once` are open, fewer while the agent is busy), and its opening and each turn
    are sent through the places' rate, again while the agent is Busy (429/503, refused unprocessed)
    as its patience allows — the conversation keeps its place meanwhile. Patience run out raises
    convy.play.busy.GaveUp: the attempt has NoVerdict (`agent_busy`)."""

    def __init__(self, agent: Agent, places: Places) -> None:
        super().__init__(agent, functools.partial(QueuedConversation, places=places))


class QueuedConversation:
    """A conversation that holds one of the agent's places while it is open."""

    def __init__(self, conversation: Conversation, places: Places) -> None:
        self._conversation = conversation
        self._places = places
        self._place = contextlib.AsyncExitStack()

    async def __aenter__(self) -> Self:
        await self._place.enter_async_context(self._places.held())
        try:
            await self._places.within(self._conversation.__aenter__)
        except BaseException:
            await self._place.aclose()
            raise
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        try:
            await self._conversation.__aexit__(kind, error, trace)
        finally:
            await self._place.aclose()

    async def reply(self, text: str) -> Answer:
        return await self._places.within(lambda: self._conversation.reply(text))
