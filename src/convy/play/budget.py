"""Budget: a stop of a run (like FailFast, which it wraps) for money — no further attempt starts once
the cost spent so far plus the median cost of an attempt so far would pass the budget; the attempts
in flight finish (DESIGN §14.2)."""

from __future__ import annotations

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
    """The stop `then` (fail-fast), and a budget of `usd` (0: none): asked before an attempt starts,
    its cause is `budget` once the known cost of the attempts ended so far plus the median of their
    costs would pass `usd`. Only prices that are known count: with none known it never stops."""

    def __init__(self, usd: float, then: Halt) -> None:
        self.usd = usd
        self.then = then
        self.spent = Paid()
        self.reached = False

    @property
    def cause(self) -> str:
        if self.then.cause:
            return self.then.cause
        if not self.reached and self.usd > 0 and self.spent.costs:
            self.reached = self.spent.total + self.spent.median() > self.usd
        return BUDGET if self.reached else ""

    def earlier(self, outcomes: Iterable[Outcome]) -> Budget:
        """The attempts a resumed run folder holds already, counted as spent (not shown to `then`)."""
        for outcome in outcomes:
            self.spent.add(outcome)
        return self

    def seen(self, outcome: Outcome, total: int) -> None:
        self.then.seen(outcome, total)
        self.spent.add(outcome)
