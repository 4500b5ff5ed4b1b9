"""How a run folder played with adaptive repeats in two rounds (docs/decisions/0017), from before
decision 28, is read: when a scenario was unclear, a rule the staged design still uses at `repeat`,
and the exact stratified test's table for a scenario played that way.

The rule looks only at a scenario's total: after the first `repeat` attempts of the run, the
scenario is unclear when, over both runs together, at least one attempt held and at most half did.
Those scenarios got attempts up to `max-repeat`. The total is symmetric in the two runs, so under no
change it says nothing about which run the passes fell in; but it still selects, so the test
conditions on the selection too: a table whose scenario got more attempts counts only the ways the
attempts could have fallen that would have got them."""

from __future__ import annotations

import math

from convy.compare.statistics import Distribution, Table, Tally
from convy.data import Data


class Unclear(Data, frozen=True, kw_only=True):
    """The rule: whether a scenario whose first attempts went `first` against a baseline of
    `baseline` gets more attempts."""

    def wanted(self, first: Tally, baseline: Tally) -> bool:
        if not first.judged or not baseline.judged:
            return False
        return self.unclear(first.held + baseline.held, first.judged + baseline.judged)

    def unclear(self, held: int, judged: int) -> bool:
        """At least one of `judged` attempts held, and at most half."""
        return held >= 1 and 2 * held <= judged


class Designed(Table, frozen=True, kw_only=True):
    """A scenario's table in a run with adaptive repeats: `first` is its tally after the first
    round (the attempts the rule saw). With more attempts than that, its distribution under no
    change counts only the arrangements whose first round the rule found unclear; without, those
    it did not (every arrangement has the same total then: Fisher's test as it is). When the
    tallies cannot have come from the rule (attempts without verdict in between, a run resumed
    without its baseline), it is Fisher's test as it is."""

    first: Tally

    def distribution(self) -> Distribution:
        plain = super().distribution()
        extra = self.now.judged - self.first.judged
        if extra <= 0 or self.now.held < self.first.held or self.now.held - self.first.held > extra:
            return plain
        rule = Unclear()
        if not rule.wanted(self.first, self.baseline):
            return plain
        base, first = self.baseline.judged, self.first.judged
        total = self.now.held + self.baseline.held
        start = max(0, total - base)
        weights: list[int] = []
        for held in range(start, min(total, self.now.judged) + 1):
            weight = 0
            for early in range(max(0, held - extra), min(first, held) + 1):
                if rule.unclear(total - held + early, base + first):
                    ways = math.comb(first, early) * math.comb(extra, held - early)
                    weight += math.comb(base, total - held) * ways
            weights.append(weight)
        if weights[self.now.held - start] == 0:
            return plain
        return Distribution(start=start, weights=tuple(weights))
