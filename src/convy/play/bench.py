"""Playing attempts against an agent concurrently, each Outcome handed to a journal the moment it
ends, and stopping the run (fail-fast) before further conversations open; results come back in
declaration order, not completion order."""

from __future__ import annotations

import asyncio
import datetime
import traceback
from collections.abc import Sequence
from types import TracebackType
from typing import Protocol, Self

import msgspec

from convy.play.agent import Agent, Answer, Conversation, Forwarded
from convy.play.attempt import Attempt
from convy.play.dialog import Judge
from convy.play.model import UNREACHED, Model
from convy.play.outcome import STAMP, Failed, NoVerdict, Outcome, Verdict
from convy.play.price import UNPRICED, Pricing
from convy.play.replay import Pairs
from convy.play.reuse import Verdicts
from convy.play.wire.preset import NO_SERVER
from convy.play.wire.reading import NOTHING_AT
from convy.words import Plural, Shortened

FIRST = 5
"""How many of the first attempts to end fail-fast looks at (see docs/gate.md)."""


class Journal(Protocol):
    """Where a bench puts each attempt the moment it ends."""

    def record(self, outcome: Outcome) -> None: ...


class Halt(Protocol):
    """What stops a run early: asked before each attempt starts (`cause` empty: go on), told of
    each attempt that ended and of the first agent answer. FailFast, and Budget (play/budget.py)
    around it. `admit` is awaited before an attempt's conversation opens: it may hold the attempt
    back until an attempt in flight was answered or ended (the run's first agent request goes
    alone; a budget waits to know what an attempt costs)."""

    @property
    def cause(self) -> str: ...

    async def admit(self) -> None: ...

    def answered(self) -> None: ...

    def seen(self, outcome: Outcome, total: int) -> None: ...


class Mistake(msgspec.Struct, frozen=True):
    """An attempt that ended on a setup mistake (decision 37): the agent could not be reached or
    refused the request as such (`not_delivered`), its answer path found nothing in its answer (a
    wrong `agent-answer`: every attempt would fail so), a model refused its key (HTTP 401 or 403),
    or a model could not be reached (refused, a name not resolved, TLS failed).
    `text` says what happened and the setting to check, "" when the attempt ended otherwise."""

    outcome: Outcome

    def text(self) -> str:
        match self.outcome.decision:
            case Failed(reason="not_delivered", status=status, detail=detail):
                what = detail.partition(": ")[2] or detail
                return f"the agent was not reached; check {self.agent_setting(status, detail)}: {what}"
            case Failed(reason="bad_answer", detail=detail) if (
                NOTHING_AT in detail and not self.outcome.turns
            ):
                return f"the agent's answer was not found: {detail}"
            case NoVerdict(status=401 | 403 as status, detail=detail, message=message) if detail.startswith(
                ("user: ", "judge: ")
            ):
                role = detail.partition(":")[0]
                key = "model-key" if role == "user" else "judge-key (or model-key)"
                said = f": {message}" if message else ""
                return f"the {role} model refused its key (HTTP {status}){said}; check {key}"
            case NoVerdict(status=0, detail=detail) if UNREACHED in detail and detail.startswith(
                ("user: ", "judge: ")
            ):
                role, _, what = detail.partition(": ")
                return f"the {role} model was not reached: {what}"
            case _:
                return ""

    def agent_setting(self, status: int, detail: str) -> str:
        if NO_SERVER in detail:
            return "the agent file's url and protocol"
        if detail.startswith("session_failed"):
            return "the agent file's session.start"
        if status in (401, 403):
            return "agent-headers (or the agent file's headers and auth)"
        return "agent-url (or the agent file's url)"


class FailFast:
    """Fail-fast (see docs/gate.md): when the first `first` attempts to end (all of them, if the run has
    fewer) all ended failed or without verdict for the same cause — the same reason and the same HTTP
    status — and none held, no further attempt starts. `cause` says why, empty while going on.
    `first` 0 turns that rule off. With `mistakes`, a setup mistake (Mistake) stops the run at the
    first attempt it ends, while no attempt has yet reached the agent's logic (an agent key's or
    model key's refusal, or a model not reached, at any time); `FailFast(0, mistakes=False)` never
    stops (`fail-fast: false`).

    Whatever it stops, the run's first agent request goes alone (decision 37): the first attempt
    admitted starts at once, the others once an agent answer came back (`answered`) or an attempt
    ended, so a setup mistake plays one attempt, not one per concurrency place."""

    def __init__(self, first: int = FIRST, *, mistakes: bool = True) -> None:
        self.first = first
        self.mistakes = mistakes
        self.ended: list[Outcome] = []
        self.cause = ""
        self.reached = False
        self.admitted = False
        self.open = asyncio.Event()
        """Set once the first request was answered or an attempt ended: every attempt may start."""

    async def admit(self) -> None:
        """The first attempt starts at once; the others wait for the first agent answer or the
        end of an attempt. Fail-fast holds nothing back after that: it only stops attempts."""
        if not self.admitted:
            self.admitted = True
            return
        await self.open.wait()

    def answered(self) -> None:
        """An agent request was answered: the agent is reached, every attempt may start."""
        self.open.set()

    def seen(self, outcome: Outcome, total: int) -> None:
        """One more attempt ended, of `total` to play."""
        self.open.set()
        mistake = Mistake(outcome).text() if self.mistakes else ""
        if mistake and not self.cause and (not self.reached or isinstance(outcome.decision, NoVerdict)):
            self.cause = mistake
        self.reached = self.reached or bool(outcome.turns)
        wanted = min(self.first, total)
        if not wanted or len(self.ended) >= wanted:
            return
        self.ended.append(outcome)
        if len(self.ended) == wanted and not self.cause:
            self.cause = self.common()

    def common(self) -> str:
        causes = {self.key(outcome) for outcome in self.ended}
        if len(causes) != 1:
            return ""
        match self.ended[0].decision:
            case Verdict():
                return ""
            case (
                Failed(reason=reason, status=status, message=message, detail=detail)
                | NoVerdict(reason=reason, status=status, message=message, detail=detail)
            ):
                shown = f" (HTTP {status})" if status else ""
                said = Shortened(" ".join((message or detail).split()), 200).shown()
                kind = "failed" if isinstance(self.ended[0].decision, Failed) else "got no verdict"
                count = len(self.ended)
                return f"the first {Plural(count, 'attempt').text()} to end all {kind}: {reason}{shown}" + (
                    f": {said}" if said else ""
                )

    def key(self, outcome: Outcome) -> tuple[str, str, int]:
        match outcome.decision:
            case Verdict():
                return ("verdict", "", 0)
            case Failed(reason=reason, status=status):
                return ("failed", reason, status)
            case NoVerdict(reason=reason, status=status):
                return ("no_verdict", reason, status)


class Halted(BaseException):
    """A conversation was about to open after fail-fast stopped the run: its attempt never starts
    and leaves no line. A BaseException, so no attempt's own error handling records it."""


class Halting(Forwarded):
    """The same agent, whose conversations do not open once `stop` has a cause: an attempt that was
    waiting for a place (QueuedAgent) when the run stopped never talks to the agent or the models."""

    def __init__(self, agent: Agent, stop: Halt) -> None:
        super().__init__(agent)
        self._stop = stop

    def conversation(self, key: str) -> Conversation:
        return HaltingConversation(self._agent.conversation(key), self._stop)


class HaltingConversation:
    """A conversation that opens once `stop` admits it, and, once open, closes again at once and
    raises Halted when the run stopped; each answer it gets is told to `stop` (`answered`)."""

    def __init__(self, conversation: Conversation, stop: Halt) -> None:
        self._conversation = conversation
        self._stop = stop

    async def __aenter__(self) -> Self:
        await self._stop.admit()
        if self._stop.cause:
            raise Halted
        await self._conversation.__aenter__()
        if self._stop.cause:
            await self._conversation.__aexit__(None, None, None)
            raise Halted
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self._conversation.__aexit__(kind, error, trace)

    async def reply(self, text: str) -> Answer:
        answer = await self._conversation.reply(text)
        self._stop.answered()
        return answer


class Bench(msgspec.Struct, frozen=True, kw_only=True):
    """An agent, the simulated user's model and a judge, already wrapped with their limits
    (QueuedAgent, PatientModel...); `ahead` is how many attempts may be under way at once; `pairs`,
    the baseline attempts whose user is replayed (`replay: user`), and `verdicts`, the decisions an
    attempt with the same transcript reuses (told of each attempt as it ends)."""

    agent: Agent
    user: Model
    judge: Judge
    ahead: int = 16
    pairs: Pairs = Pairs()
    verdicts: Verdicts = msgspec.field(default_factory=Verdicts)
    pricing: Pricing = UNPRICED
    """The prices each outcome's cost is worked out at (empty: every price unknown)."""

    async def run(
        self, attempts: Sequence[Attempt], journal: Journal, halt: Halt | None = None
    ) -> tuple[Outcome, ...]:
        """Play every attempt, each priced as it ends; one that breaks never stops the others.
        With `halt`, no attempt starts once it has a cause; those under way finish."""
        results: list[Outcome | None] = [None] * len(attempts)
        stop: Halt = halt or FailFast(0)
        agent = Halting(self.agent, stop)
        # `ahead` players take the attempts in order, one after another: a task per attempt, all
        # waiting on one semaphore, would make starting and stopping a large run quadratic
        waiting = iter(enumerate(attempts))

        async def player() -> None:
            for position, attempt in waiting:
                if stop.cause:
                    return
                try:
                    outcome = self.pricing.priced(await self._outcome(attempt, agent))
                except Halted:
                    return
                self.verdicts.ended(outcome)
                journal.record(outcome)
                results[position] = outcome
                stop.seen(outcome, len(attempts))

        async with asyncio.TaskGroup() as group:
            for _ in range(min(self.ahead, len(attempts))):
                group.create_task(player())
        return tuple(outcome for outcome in results if outcome is not None)

    async def _outcome(self, attempt: Attempt, agent: Agent) -> Outcome:
        try:
            pairing = self.pairs.pairing(attempt.scenario.name, attempt.index)
            return await attempt.outcome(agent, self.user, self.judge, pairing, self.verdicts)
        except Exception as error:  # convy's own bug in one attempt: recorded on it, the run goes on
            return Outcome(
                scenario=attempt.scenario.name,
                index=attempt.index,
                fingerprint=attempt.scenario.fingerprint(),
                turns=(),
                seconds=0.0,
                decision=NoVerdict(
                    reason="internal_error",
                    detail="".join(traceback.format_exception_only(error)).strip(),
                ),
                ended="internal_error",
                started=datetime.datetime.now(datetime.UTC).strftime(STAMP),
            )
