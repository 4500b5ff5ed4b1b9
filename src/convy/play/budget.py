"""A run's stop for money, wrapping fail-fast's: no further attempt starts once the cost spent so
far plus the median cost of an attempt so far would pass the budget; the attempts in flight finish
(decision 30). Counting what those in flight will cost too, it holds an attempt back rather than
start it past the budget (decision 30)."""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Iterable

from convy.play.bench import Halt
from convy.play.outcome import Outcome

BUDGET = "budget"
"""The cause a budget stop records in run.json."""


class Paid:
    """The known cost of each attempt ended so far, in USD (its parts of unknown price left out)."""

    def __init__(self) -> None:
        self.costs: list[float] = []

    def add(self, outcome: Outcome) -> None:
        cost = outcome.cost
        known = 0.0 if cost is None else sum(p for p in (cost.user, cost.judge, cost.agent) if p is not None)
        self.costs.append(known)

    @property
    def total(self) -> float:
        return sum(self.costs)

    def median(self) -> float:
        return statistics.median(self.costs) if self.costs else 0.0


class Budget:
    """The stop `then` (fail-fast), and a budget of `usd` (0: none). Only prices that are known
    count: with none known it never stops.

    Before an attempt starts (`admit`), it counts what the attempts in flight will cost too: the
    first attempt plays alone, so that what an attempt costs is known before more start; then an
    attempt starts while the known cost of those ended plus the median of their costs for each
    attempt in flight and this one stays within `usd`, else it waits for one in flight to end. Its
    cause is `budget` once the cost ended so far plus one median attempt would pass `usd` (then no
    attempt can start); those in flight finish."""

    def __init__(self, usd: float, then: Halt) -> None:
        self.usd = usd
        self.then = then
        self.spent = Paid()
        self.reached = False
        self.flying = 0
        """Attempts admitted and not ended yet."""
        self.ended = asyncio.Event()

    @property
    def cause(self) -> str:
        if self.then.cause:
            return self.then.cause
        if not self.reached and self.usd > 0 and self.spent.costs:
            self.reached = self.spent.total + self.spent.median() > self.usd
        return BUDGET if self.reached else ""

    async def admit(self) -> None:
        """Wait until one more attempt may start within the budget (or the run stopped: `cause`
        then says why). Every attempt admitted ends `seen` (or the run has stopped)."""
        await self.then.admit()
        while self.usd > 0 and not self.cause and not self.room():
            ended = self.ended
            await ended.wait()
        if not self.cause:
            self.flying += 1

    def room(self) -> bool:
        """Whether one more attempt fits beside those in flight."""
        if not self.spent.costs:
            return not self.flying
        return self.spent.total + self.spent.median() * (self.flying + 1) <= self.usd

    def earlier(self, outcomes: Iterable[Outcome]) -> Budget:
        """The attempts a resumed run folder holds already, counted as spent (not shown to `then`)."""
        for outcome in outcomes:
            self.spent.add(outcome)
        return self

    def answered(self) -> None:
        self.then.answered()

    def seen(self, outcome: Outcome, total: int) -> None:
        self.then.seen(outcome, total)
        self.spent.add(outcome)
        self.flying = max(0, self.flying - 1)  # an attempt that broke before it opened was never admitted
        self.ended.set()
        self.ended = asyncio.Event()
