"""The pass rate of a run played by stages (decision 28), estimated without the bias of stopping.

A scenario's share held / judged is biased under staged play: whether it played on depended on its
own attempts. Its first attempt (its first judged one) is always played and is a fair draw, so its
result is an unbiased estimate of the scenario's rate; averaged over the arrangements of the holds
among the attempts that the rule would have played just so (the stages reached, the number held,
the baseline's recorded tally taken as fixed), it stays unbiased and loses the noise of which attempt
held (Rao–Blackwell: every such arrangement is equally likely, whatever the rate). The run's rate
is the mean of those estimates over its scenarios, with a score interval from their exact variance.
A scenario played plainly (no recorded tally) is read by its share, as a fixed repeat is."""

from __future__ import annotations

import functools
import math
from collections import Counter
from fractions import Fraction

from convy.compare.parts import ScenarioSummary
from convy.compare.staged import Played, Stages
from convy.compare.statistics import Z95, Rate, Share, Tally, Unknown
from convy.data import Data

Outcome = tuple[int, int, int, int, Fraction]
"""One way a scenario can end: the stage it stops at, the attempts judged, the number held, the
arrangements of those holds the rule would have played just so, and the estimate read from it."""

Ways = tuple[tuple[int, tuple[tuple[int, int, float, float], ...]], ...]
"""Distinct sets of ways scenarios could have ended, each with how many scenarios share it: the
attempts judged, the number held, the arrangements and the estimate (as floats)."""

STEPS = 40
"""Bisections of an interval's bound (2**-40 of the width: far below what is shown)."""


class Course(Data, frozen=True, kw_only=True):
    """The ways a scenario can go through `design`'s stages when they judge `judged` attempts each,
    against a baseline tally of `against` taken as fixed. Its answers are cached by value: equal
    courses (most scenarios of a run share a few) are worked out once."""

    design: Stages
    judged: tuple[int, ...]
    against: Tally

    @functools.lru_cache(maxsize=4096)  # noqa: B019 (a small frozen value, hashed by its fields)
    def arrangements(self, settled: bool) -> dict[int, tuple[int, Fraction]]:
        """For each count held over the stages: the arrangements of those holds the rule would have
        played just so (going on after each stage but the last and, `settled`, stopping after the
        last), and the mean over them of the first judged stage's share held."""
        design, against = self.design, self.against
        states: dict[int, tuple[int, Fraction]] = {0: (1, Fraction(0))}
        done = 0
        for stage, count in enumerate(self.judged):
            if stage:
                states = {
                    held: state
                    for held, state in states.items()
                    if design.goes_on(stage - 1, Tally(held=held, judged=done), against)
                }
            grown: dict[int, tuple[int, Fraction]] = {}
            for held, (ways, first) in states.items():
                for more in range(count + 1):
                    times = math.comb(count, more)
                    share = Fraction(ways * times * more, count) if not done and count else first * times
                    old = grown.get(held + more, (0, Fraction(0)))
                    grown[held + more] = (old[0] + ways * times, old[1] + share)
            states = grown
            done += count
        if settled and self.judged:
            last = len(self.judged) - 1
            states = {
                held: state
                for held, state in states.items()
                if not design.goes_on(last, Tally(held=held, judged=done), against)
            }
        return {held: (ways, first / ways) for held, (ways, first) in states.items() if ways}

    @functools.lru_cache(maxsize=4096)  # noqa: B019 (a small frozen value, hashed by its fields)
    def outcomes(self) -> tuple[Outcome, ...]:
        """Every way the scenario can end under the rule: each stage it can stop at, and each count
        held there."""
        found: list[Outcome] = []
        for end in range(len(self.judged)):
            upto = Course(design=self.design, judged=self.judged[: end + 1], against=self.against)
            for held, (ways, estimate) in upto.arrangements(True).items():
                found.append((end, sum(upto.judged), held, ways, estimate))
        return tuple(found)

    @functools.lru_cache(maxsize=4096)  # noqa: B019 (a small frozen value, hashed by its fields)
    def powers(self, k: int) -> tuple[Fraction, ...] | None:
        """An unbiased estimate of p^k for each of `outcomes()` (in their order): the solution f of
        Σ f(x)·P_p(x) = p^k as polynomials in p, written in the Bernstein basis of the most attempts
        (exact, by Gaussian elimination); None when no function of how the scenario ended has p^k
        as its mean."""
        ways = self.outcomes()
        most = sum(self.judged)
        if k > most:
            return None
        rows = [
            [
                Fraction(w * math.comb(most - n, j - s)) if 0 <= j - s <= most - n else Fraction(0)
                for _, n, s, w, _ in ways
            ]
            + [Fraction(math.comb(most - k, j - k) if j >= k else 0)]
            for j in range(most + 1)
        ]
        width = len(ways)
        pivots: list[int] = []
        row = 0
        for column in range(width):
            chosen = next((r for r in range(row, len(rows)) if rows[r][column]), None)
            if chosen is None:
                continue
            rows[row], rows[chosen] = rows[chosen], rows[row]
            lead = rows[row][column]
            rows[row] = [value / lead for value in rows[row]]
            for other in range(len(rows)):
                if other != row and rows[other][column]:
                    factor = rows[other][column]
                    rows[other] = [a - factor * b for a, b in zip(rows[other], rows[row], strict=True)]
            pivots.append(column)
            row += 1
        if any(all(value == 0 for value in r[:width]) and r[width] != 0 for r in rows):
            return None
        solution = [Fraction(0)] * width
        for place, column in enumerate(pivots):
            solution[column] = rows[place][width]
        return tuple(solution)


class Reached(Data, frozen=True, kw_only=True):
    """One scenario of a staged run as its stages went: each stage's tally (`stages`, those
    reached) and the baseline's tally the rule decided against (`against`); `design` empty: played
    plainly (`stages` holds its one tally)."""

    design: Stages = Stages()
    stages: tuple[Tally, ...] = ()
    against: Tally = Tally(held=0, judged=0)

    def total(self) -> Tally:
        return Tally(held=sum(s.held for s in self.stages), judged=sum(s.judged for s in self.stages))

    def staged(self) -> bool:
        """Whether the rule played it (else it is read as a fixed repeat: its share)."""
        return self.design.on and bool(self.stages) and self.settled() is not None

    def settled(self) -> bool | None:
        """Whether its stages follow the rule and it stopped where the rule stops (True), follow the
        rule but stopped before it said (False: a run stopped early), or do not follow it (None)."""
        played = Played(design=self.design, stages=self.stages, against=self.against)
        for settled in (True, False):
            if played.follows(self.against, settled):
                return settled
        return None

    def estimate(self) -> Fraction:
        """The scenario's rate estimated without bias: the first judged attempt's share averaged over
        the arrangements the rule allows (its share held / judged when played plainly); it needs an
        attempt judged."""
        total = self.total()
        settled = self.settled()
        if not self.design.on or settled is None:
            return Fraction(total.held, total.judged)
        judged = tuple(s.judged for s in self.stages)
        course = Course(design=self.design, judged=judged, against=self.against)
        return course.arrangements(settled)[total.held][1]

    def sizes(self) -> tuple[int, ...]:
        """The attempts judged in each stage: those reached as judged, those not reached whole."""
        reached = tuple(s.judged for s in self.stages)
        rest = tuple(len(self.design.span(stage)) for stage in range(len(reached), len(self.design.ends)))
        return reached + rest

    def course(self) -> Course:
        """The ways it could have gone through the stages, those not reached at their full size."""
        return Course(design=self.design, judged=self.sizes(), against=self.against)

    def space(self) -> tuple[Outcome, ...]:
        """Every way the scenario could have ended, with the estimate each gives."""
        if not self.staged():
            total = self.total()
            return tuple(
                (0, total.judged, held, math.comb(total.judged, held), Fraction(held, total.judged))
                for held in range(total.judged + 1)
            )
        return self.course().outcomes()

    def pass_k(self, k: int) -> float:
        """An unbiased estimate of p^k (it may lie outside 0–1, as such estimates do); where none
        exists, the estimate's k-th power."""
        total = self.total()
        if not self.staged():
            if total.judged >= k:
                return math.comb(total.held, k) / math.comb(total.judged, k)
            return float(self.estimate()) ** k
        estimates = self.course().powers(k)
        if estimates is None or self.settled() is not True:
            return float(self.estimate()) ** k
        end = len(self.stages) - 1
        place = next(
            i for i, (stage, _, s, _, _) in enumerate(self.space()) if stage == end and s == total.held
        )
        return float(estimates[place])


class StagedRate(Data, frozen=True, kw_only=True):
    """The pass rate of a staged run: the mean over its scenarios with an attempt judged of each
    one's unbiased estimate (Reached.estimate), with a score interval: the rates p whose distance
    from the estimate, less a quarter of an effective attempt (the estimate moves in steps: half
    of Newcombe's continuity correction), is within z standard deviations of the estimate as it
    would spread if every scenario held at p. When every scenario played n attempts plainly, that is
    Wilson's interval so corrected, at all the attempts judged."""

    scenarios: tuple[Reached, ...]

    @classmethod
    def of(cls, ends: tuple[int, ...], repeat: int, scenarios: tuple[ScenarioSummary, ...]) -> StagedRate:
        """A staged run's scenarios as its summary holds them (stages ending at `ends`): each with a
        recorded baseline tally read by its stages, the others (and a re-judged one) by their share."""
        design = Stages(ends=ends, repeat=repeat)
        return cls(
            scenarios=tuple(
                Reached(stages=(s.tally,))
                if s.against is None or not s.stages or s.rejudged
                else Reached(design=design, stages=s.stages, against=s.against)
                for s in scenarios
            )
        )

    def judged(self) -> tuple[Reached, ...]:
        return tuple(s for s in self.scenarios if s.total().judged)

    def share(self) -> Fraction | None:
        """The estimate, exactly; None when nothing was judged."""
        judged = self.judged()
        if not judged:
            return None
        return sum((s.estimate() for s in judged), start=Fraction(0)) / len(judged)

    def spread(self) -> Ways:
        """The ways the judged scenarios could have ended, each distinct set once with how many
        scenarios share it (ways and estimates as floats, for the variance)."""
        counted = Counter(s.space() for s in self.judged())
        return tuple(
            (count, tuple((n, s, float(ways), float(estimate)) for _, n, s, ways, estimate in space))
            for space, count in counted.items()
        )

    def variance(self, rate: float, spread: Ways) -> float:
        """The variance of the estimate if every scenario held at `rate` (`spread`: self.spread())."""
        total = 0.0
        scenarios = 0
        for count, space in spread:
            mean = square = 0.0
            for n, s, ways, estimate in space:
                chance = ways * rate**s * (1 - rate) ** (n - s)
                mean += chance * estimate
                square += chance * estimate * estimate
            total += count * max(0.0, square - mean * mean)
            scenarios += count
        return total / scenarios**2

    def rate(self, z: float = Z95) -> Rate | Unknown:
        share = self.share()
        if share is None:
            return Unknown()
        value = float(share)
        spread = self.spread()
        low = 0.0 if value <= 0 else self.bound(value, 0.0, z, spread)
        high = 1.0 if value >= 1 else self.bound(value, 1.0, z, spread)
        return Rate(value=value, low=min(low, value), high=max(high, value))

    def bound(self, value: float, edge: float, z: float, spread: Ways) -> float:
        """The score interval's bound between the estimate and `edge` (0 or 1)."""
        inside, outside = value, edge
        for _ in range(STEPS):
            middle = (inside + outside) / 2
            variance = self.variance(middle, spread)
            # a quarter of an effective attempt off the distance: the estimate moves in steps
            step = variance / (4 * middle * (1 - middle)) if 0 < middle < 1 else 0.0
            if max(0.0, abs(value - middle) - step) ** 2 <= z * z * variance:
                inside = middle
            else:
                outside = middle
        return inside

    def pass_k(self, k: int) -> Share | Unknown:
        """pass^k over every scenario judged, those stopped before k attempts too: the mean of each
        one's unbiased estimate of p^k, kept within 0–1."""
        judged = self.judged()
        if not judged:
            return Unknown()
        mean = math.fsum(s.pass_k(k) for s in judged) / len(judged)
        return Share(value=min(1.0, max(0.0, mean)))
