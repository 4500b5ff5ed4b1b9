"""A run's attacks counted by category (scenarios with `attack`): how many of the attempts played
succeeded — did not hold, the agent gave way — with the Wilson interval of that share, and beside
it the baseline's figure for the same category."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from convy.compare.parts import ScenarioSummary
from convy.compare.statistics import Rate, Tally, Unknown
from convy.data import Data
from convy.project.catalogue import Catalogue


class Attacked(Data, frozen=True, kw_only=True):
    """One category's attacks in one run: `played` (attempts judged), `succeeded` (of them, those
    that did not hold) and the share that succeeded with its Wilson interval. Played 0: none."""

    category: str
    title: str = ""
    owasp: str = ""
    played: int = 0
    succeeded: int = 0
    rate: Rate | Unknown = Unknown()

    @classmethod
    def of(cls, category: str, tally: Tally) -> Attacked:
        known = Catalogue.shipped().categories.get(category)
        succeeded = Tally(held=tally.judged - tally.held, judged=tally.judged)
        return cls(
            category=category,
            title=known.title if known is not None else "",
            owasp=known.owasp if known is not None else "",
            played=tally.judged,
            succeeded=succeeded.held,
            rate=succeeded.rate(),
        )

    def text(self) -> str:
        """`2 of 5 succeeded, 40% (95% CI 12%–77%)`; `none played`."""
        if not self.played:
            return "none played"
        return f"{self.succeeded} of {self.played} succeeded, {self.rate.text()}"


class Attacks(msgspec.Struct, frozen=True):
    """The attack scenarios of a run, by category in the catalogue's order (others after, by name)."""

    scenarios: Iterable[ScenarioSummary]

    def counted(self) -> tuple[Attacked, ...]:
        tallies: dict[str, Tally] = {}
        for scenario in self.scenarios:
            if scenario.category:
                tallies[scenario.category] = tallies.get(scenario.category, Tally(held=0, judged=0)).plus(
                    scenario.tally
                )
        if not tallies:
            return ()
        order = {category: place for place, category in enumerate(Catalogue.shipped().ids)}
        return tuple(
            Attacked.of(category, tallies[category])
            for category in sorted(tallies, key=lambda name: (order.get(name, len(order)), name))
        )


class AttackChange(Data, frozen=True, kw_only=True):
    """One category's attacks now, and in the baseline (played 0 there: the baseline had none)."""

    now: Attacked
    baseline: Attacked
