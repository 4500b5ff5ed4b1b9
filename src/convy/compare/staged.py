"""Staged repeats (docs/decisions/0028) as a comparison reads them: the schedule and its rule, how
one run played a scenario by it, and the exact stratified test's table for such a scenario.

With a baseline, a scenario plays one attempt, stops when every attempt so far in both runs held or
every one missed, else plays to `repeat`, and goes on to `max-repeat` when the comparison is still
unclear. The table's null distribution counts only the arrangements of the attempts that each
stage's decision (in this run and, when the baseline was staged too, in the baseline) would have
made."""

from __future__ import annotations

import math

from convy.compare.adaptive import Unclear
from convy.compare.statistics import Distribution, Table, Tally
from convy.data import Data

EMPTY = Tally(held=0, judged=0)


class Stages(Data, frozen=True, kw_only=True):
    """A staged schedule: `ends` where each stage's attempts end (1, 3, 9: attempt 0, then 1 and 2,
    then 3 to 8); `repeat` is the end where the Unclear rule decides. Before it a scenario goes on
    unless its attempts so far, in both runs, all held or all missed (with none judged in this run
    yet, it goes on); at `repeat` it goes on when the comparison is unclear. Empty `ends`: off."""

    ends: tuple[int, ...] = ()
    repeat: int = 0

    @classmethod
    def of(cls, repeat: int, max_repeat: int, floored: bool = False) -> Stages:
        """The schedule 1 → repeat → max-repeat (each end once), or repeat → max-repeat for a run
        with a floor (`floored`); off when max-repeat is not more."""
        if max_repeat <= repeat:
            return cls()
        first = repeat if floored else 1
        return cls(ends=tuple(sorted({first, repeat, max_repeat})), repeat=repeat)

    @property
    def on(self) -> bool:
        return len(self.ends) > 1

    def stage(self, index: int) -> int:
        """The stage attempt `index` belongs to (the last one for any index past the end)."""
        return next((place for place, end in enumerate(self.ends) if index < end), len(self.ends) - 1)

    def span(self, stage: int) -> range:
        """The attempt indices of `stage`."""
        return range(self.ends[stage - 1] if stage else 0, self.ends[stage])

    def goes_on(self, stage: int, so_far: Tally, against: Tally) -> bool:
        """Whether a scenario whose attempts up to the end of `stage` went `so_far`, against a
        baseline of `against`, plays the next stage."""
        if stage >= len(self.ends) - 1:
            return False
        end = self.ends[stage]
        if not so_far.judged:
            return end < self.repeat
        held, judged = so_far.held + against.held, so_far.judged + against.judged
        if end < self.repeat:
            return 0 < held < judged
        return Unclear().unclear(held, judged)

    def reach(self, stages: tuple[Tally, ...], against: Tally) -> int:
        """How many attempts the rule calls for once stages went `stages`: the end of the stage it
        stops at (or of the next one, not played yet)."""
        so_far = EMPTY
        for stage, end in enumerate(self.ends):
            if stage >= len(stages):
                return end
            so_far = so_far.plus(stages[stage])
            if not self.goes_on(stage, so_far, against):
                return end
        return self.ends[-1] if self.ends else 0

    def ways(self, judged: tuple[int, ...], against: Tally, settled: bool = True) -> dict[int, int]:
        """For each count held over stages that judged `judged` attempts each, the number of
        arrangements of that many holds among those attempts that the rule would have played just
        so: going on after each stage but the last, and (`settled`) stopping after the last."""
        states = {0: 1}
        done = 0
        for stage, count in enumerate(judged):
            if stage:
                states = {
                    held: ways
                    for held, ways in states.items()
                    if self.goes_on(stage - 1, Tally(held=held, judged=done), against)
                }
            grown: dict[int, int] = {}
            for held, ways in states.items():
                for more in range(count + 1):
                    grown[held + more] = grown.get(held + more, 0) + ways * math.comb(count, more)
            states = grown
            done += count
        if settled and judged:
            last = len(judged) - 1
            states = {
                held: ways
                for held, ways in states.items()
                if not self.goes_on(last, Tally(held=held, judged=done), against)
            }
        return states


class Played(Data, frozen=True, kw_only=True):
    """How one run played a scenario by `design`: each stage's tally (the stages it reached, in
    order), and the baseline's tally it decided against (None: the other run of its table)."""

    design: Stages
    stages: tuple[Tally, ...]
    against: Tally | None = None

    def total(self) -> Tally:
        return Tally(held=sum(s.held for s in self.stages), judged=sum(s.judged for s in self.stages))

    def follows(self, against: Tally, settled: bool) -> bool:
        """Whether the rule, against `against` (when not this run's own), plays these stages: going
        on after each but the last and (`settled`) stopping after the last."""
        decided = against if self.against is None else self.against
        so_far = EMPTY
        for stage, tally in enumerate(self.stages):
            so_far = so_far.plus(tally)
            goes_on = self.design.goes_on(stage, so_far, decided)
            if stage < len(self.stages) - 1 and not goes_on:
                return False
        return not (settled and self.stages and goes_on)

    def ways(self, against: Tally, settled: bool) -> dict[int, int]:
        decided = against if self.against is None else self.against
        return self.design.ways(tuple(s.judged for s in self.stages), decided, settled)


class Staged(Table, frozen=True, kw_only=True):
    """A scenario's table in a run that played it by stages (`played`), against a baseline that
    played it plainly or (`before`, deciding against an older run) by stages too. Under no change
    every arrangement of the holds among both runs' judged attempts is equally likely, whatever the
    rate; the distribution counts only those that every stage's decision would have made. Tallies
    that cannot have come from the rule (a stage that went on when the rule says stop) give
    Fisher's test as it is; a last stop the rule would not have made (a run stopped early) is not
    held against the arrangements."""

    played: Played
    before: Played | None = None

    def distribution(self) -> Distribution:
        plain = super().distribution()
        if self.played.total() != self.now:
            return plain
        prior = self.before
        if prior is not None and (prior.total() != self.baseline or not prior.follows(EMPTY, False)):
            prior = None  # the baseline's stages are not the rule's (re-judged, say): read it plainly
        for settled in (True, False):
            if self.played.follows(self.baseline, settled):
                ended = prior is not None and prior.follows(EMPTY, True)
                return self.weighed(prior, settled, ended) or plain
        return plain

    def weighed(self, prior: Played | None, settled: bool, ended: bool) -> Distribution | None:
        """The conditional distribution (`settled`: this run's last stop held against the
        arrangements; `ended`: the baseline's), or None when the observed tallies have no weight."""
        total = self.now.held + self.baseline.held
        base = self.baseline.judged
        if prior is None:
            earlier = {held: math.comb(base, held) for held in range(base + 1)}
        else:
            earlier = prior.ways(EMPTY, ended)
        start = max(0, total - base)
        weights: list[int] = []
        for held in range(start, min(total, self.now.judged) + 1):
            old = earlier.get(total - held, 0)
            ways = self.played.ways(Tally(held=total - held, judged=base), settled).get(held, 0) if old else 0
            weights.append(old * ways)
        place = self.now.held - start
        if not 0 <= place < len(weights) or weights[place] == 0:
            return None
        return Distribution(start=start, weights=tuple(weights))
