"""Adaptive repeats: which scenarios get more attempts (Unclear), and the exact stratified test's
table for a scenario of such a run (Designed), whose null distribution knows how its attempts were
allocated — so the false-alarm rate stays at or under `alpha` (docs/decisions/0017).

The rule looks only at a scenario's total: after the first `repeat` attempts of the run, the
scenario is unclear when, over both runs together, at least one attempt held and at most half did.
Those scenarios get attempts up to `max-repeat`. The total is symmetric in the two runs, so under no
change it says nothing about which run the passes fell in; but it still selects, so the test
conditions on the selection too: a table whose scenario got more attempts counts only the ways the
attempts could have fallen that would have got them."""

from __future__ import annotations

import math
from collections.abc import Mapping

import msgspec

from convy.compare.statistics import Distribution, Table, Tally
from convy.compare.summary import Summary
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


class Allocation(msgspec.Struct, frozen=True):
    """Which scenarios of a run get more attempts against `baseline`: those compared with it (the
    same fingerprint) whose first round the rule finds unclear. A baseline that played adaptive
    repeats itself is read by its first round only, as the comparison reads it."""

    baseline: Summary

    def chosen(self, first: Mapping[str, Tally], fingerprints: Mapping[str, str]) -> tuple[str, ...]:
        """The names, in the order of `fingerprints` (the run's scenarios and their fingerprints),
        given each scenario's tally of its first `repeat` attempts."""
        adaptive = self.baseline.max_repeat > self.baseline.repeat
        before = {s.name: s for s in self.baseline.scenarios}
        rule = Unclear()
        chosen: list[str] = []
        for name, fingerprint in fingerprints.items():
            old = before.get(name)
            if old is None or old.fingerprint != fingerprint:
                continue
            if rule.wanted(first.get(name, Tally(held=0, judged=0)), old.first if adaptive else old.tally):
                chosen.append(name)
        return tuple(chosen)


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
