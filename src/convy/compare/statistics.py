"""The statistics a comparison rests on: a tally's pass rate with its Wilson interval and pass^k, a
pass rate averaged over scenarios that each weigh the same (with Wilson's interval at its effective
number of attempts), Fisher's exact test on one scenario's tallies now and in the baseline, and the
exact stratified test over the scenarios common and unchanged in both runs.

Both tests read their p-values from the exact distribution of a count. A number that cannot be known
is the empty object Unknown, never None: an interval of nothing judged, pass^k of fewer than k
attempts, the p-value of a test over no scenario. The results are tagged records, so a page's view
records may hold them as they are.

Pure Python: exact integer binomials, no SciPy at run time."""

from __future__ import annotations

import math
from fractions import Fraction

from convy.data import Data, Tagged
from convy.play.outcome import Decision, Failed, NoVerdict, Verdict

Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""

PRECISION = 80
"""Bits a Distribution keeps once its exact weights grow past them: a sum over many scenarios is
then exact to about 2**-60 of its total mass, far below any p-value that matters."""

TIES = 10**7
"""Two weights within one part in TIES count as equally likely in a two-sided test (as in R's
fisher.test and mantelhaen.test), so rounding never splits a tie."""


class Unknown(Tagged, frozen=True, kw_only=True, tag="unknown"):
    """A number nobody can know: a rate of nothing judged, pass^k of fewer than k attempts, a
    p-value of a test over no scenario."""

    def text(self) -> str:
        return "unknown"

    def below(self, alpha: float) -> bool:
        """An unknown p-value is significant at no level."""
        return False


class Share(Tagged, frozen=True, kw_only=True, tag="share"):
    """A share between 0 and 1, such as pass^k."""

    value: float

    def __post_init__(self) -> None:
        if not 0.0 <= self.value <= 1.0:
            raise ValueError("a share lies between 0 and 1")

    def text(self) -> str:
        """As a percentage with one decimal: `75.0%`."""
        return f"{self.value * 100:.1f}%"


class Rate(Tagged, frozen=True, kw_only=True, tag="rate"):
    """A pass rate with the bounds of its interval."""

    value: float
    low: float
    high: float

    def __post_init__(self) -> None:
        if not 0.0 <= self.low <= self.value <= self.high <= 1.0:
            raise ValueError("a rate lies between 0 and 1, inside its interval")

    def text(self) -> str:
        """As percentages with one decimal: `75.0% (46.8–91.1%)`."""
        return f"{self.value * 100:.1f}% ({self.low * 100:.1f}–{self.high * 100:.1f}%)"


class PValue(Tagged, frozen=True, kw_only=True, tag="p_value"):
    """The p-value of a test."""

    value: float

    def __post_init__(self) -> None:
        if not 0.0 <= self.value <= 1.0:
            raise ValueError("a p-value lies between 0 and 1")

    def below(self, alpha: float) -> bool:
        """Whether the result is significant at level `alpha` (p < alpha)."""
        return self.value < alpha

    def text(self) -> str:
        """With three significant digits, `p = 0.0495`, or `p < 0.001` for smaller ones."""
        return "p < 0.001" if self.value < 0.001 else f"p = {self.value:.3g}"


class Tally(Data, frozen=True, kw_only=True):
    """Attempts that held out of the attempts judged (a failed attempt is judged and does not hold;
    one without a verdict is not judged)."""

    held: int
    judged: int

    def __post_init__(self) -> None:
        if not 0 <= self.held <= self.judged:
            raise ValueError("a tally holds 0 <= held <= judged")

    def plus(self, other: Tally) -> Tally:
        """The tally of both together."""
        return Tally(held=self.held + other.held, judged=self.judged + other.judged)

    @classmethod
    def of(cls, decision: Decision) -> Tally:
        """One attempt's decision counted: judged and held, judged (the agent failed), or not."""
        match decision:
            case Verdict(holds=holds):
                return cls(held=int(holds), judged=1)
            case Failed():
                return cls(held=0, judged=1)
            case NoVerdict():
                return cls(held=0, judged=0)

    def rate(self, z: float = Z95) -> Rate | Unknown:
        """The share that held with its Wilson score interval at normal quantile `z` (95% by
        default); Unknown when nothing was judged."""
        if self.judged == 0:
            return Unknown()
        return Wilson(share=self.held / self.judged, size=self.judged).rate(z)

    def pass_k(self, k: int) -> Share | Unknown:
        """pass^k as in tau-bench: the chance that k attempts drawn without replacement from the
        judged ones all held, C(held, k) / C(judged, k); Unknown with fewer than k judged."""
        if k < 1:
            raise ValueError("pass^k needs k >= 1")
        if self.judged < k:
            return Unknown()
        return Share(value=math.comb(self.held, k) / math.comb(self.judged, k))


class Wilson(Data, frozen=True, kw_only=True):
    """Wilson's score interval for a share seen over `size` attempts: the attempts judged, or for a
    mean over scenarios their effective number (Averaged.size)."""

    share: float
    size: float

    def rate(self, z: float = Z95) -> Rate:
        """The share with its interval at normal quantile `z`; a share of 0 (1) has 0 (1) as its
        bound, exactly."""
        n = self.size
        share = self.share
        spread = z * z / n
        centre = (share + spread / 2) / (1 + spread)
        half = z * math.sqrt(share * (1 - share) / n + spread / (4 * n)) / (1 + spread)
        low = 0.0 if share == 0 else min(share, max(0.0, centre - half))
        high = 1.0 if share == 1 else max(share, min(1.0, centre + half))
        return Rate(value=share, low=low, high=high)


class Averaged(Data, frozen=True, kw_only=True):
    """A pass rate over scenarios that each weigh the same, as the design's first round weighed
    them (`repeat` attempts each): the mean of the scenarios' shares held/judged, those with nothing
    judged left out. When every scenario has the same number judged, that mean is exactly the
    pooled held / judged; when the numbers differ (adaptive repeats, attempts without verdict, a run
    stopped early), pooling would weigh a scenario by its attempts — and adaptive repeats give more
    to the unclear, low ones, so a pooled rate falls with no change at all (decision 27)."""

    tallies: tuple[Tally, ...]

    def judged(self) -> tuple[Tally, ...]:
        """The tallies with at least one attempt judged."""
        return tuple(t for t in self.tallies if t.judged)

    def even(self) -> bool:
        """Whether every scenario with an attempt judged has the same number judged."""
        return len({t.judged for t in self.judged()}) <= 1

    def pooled(self) -> Tally:
        """All the attempts together."""
        return Tally(held=sum(t.held for t in self.tallies), judged=sum(t.judged for t in self.tallies))

    def share(self) -> Fraction | None:
        """The mean of the shares, exactly; None when nothing was judged."""
        judged = self.judged()
        if not judged:
            return None
        if self.even():
            pooled = self.pooled()
            return Fraction(pooled.held, pooled.judged)
        return sum((Fraction(t.held, t.judged) for t in judged), start=Fraction(0)) / len(judged)

    def size(self) -> Fraction:
        """The effective number of attempts (Kish's, for attempts weighted 1/(k·n_i)): k² / Σ 1/n_i
        over the k scenarios judged, k times the harmonic mean of their numbers judged. The mean's
        variance is p(1 − p) / size when every scenario holds at one rate p; with equal numbers it
        is all the attempts judged."""
        judged = self.judged()
        if not judged:
            return Fraction(0)
        return Fraction(len(judged) ** 2) / sum((Fraction(1, t.judged) for t in judged), start=Fraction(0))

    def rate(self, z: float = Z95) -> Rate | Unknown:
        """The mean with Wilson's interval at the effective number of attempts; with equal numbers
        judged, exactly the pooled tally's rate and interval. Unknown when nothing was judged."""
        share = self.share()
        if share is None:
            return Unknown()
        if self.even():
            return self.pooled().rate(z)
        return Wilson(share=float(share), size=float(self.size())).rate(z)


class Distribution(Data, frozen=True, kw_only=True):
    """The distribution of a count: P(start + i) = weights[i] / sum(weights), the weights
    non-negative integers (exact binomial products, or scaled to PRECISION bits once they grow)."""

    start: int
    weights: tuple[int, ...]

    def __post_init__(self) -> None:
        if not self.weights or min(self.weights) < 0 or max(self.weights) == 0:
            raise ValueError("a distribution needs non-negative weights, not all zero")

    def plus(self, other: Distribution) -> Distribution:
        """The distribution of the sum of two independent counts: the convolution of both, done as
        one product of big integers with a weight in each fixed-width slot (Kronecker's
        substitution), so it runs at the speed of integer multiplication."""
        total = sum(self.weights) * sum(other.weights)
        width = (total.bit_length() + 7) // 8
        count = len(self.weights) + len(other.weights) - 1
        packed = self._packed(width) * other._packed(width)
        data = packed.to_bytes(width * count, "little")
        weights = [int.from_bytes(data[i * width : (i + 1) * width], "little") for i in range(count)]
        start = self.start + other.start
        shift = total.bit_length() - PRECISION
        if shift > 0:
            weights = [weight >> shift for weight in weights]
            first = next(i for i, weight in enumerate(weights) if weight)
            last = max(i for i, weight in enumerate(weights) if weight)
            weights = weights[first : last + 1]
            start += first
        return Distribution(start=start, weights=tuple(weights))

    def at_most(self, count: int) -> float:
        """P(X <= count)."""
        end = max(0, count - self.start + 1)
        return sum(self.weights[:end]) / sum(self.weights)

    def at_least(self, count: int) -> float:
        """P(X >= count)."""
        begin = max(0, count - self.start)
        return sum(self.weights[begin:]) / sum(self.weights)

    def as_likely(self, count: int) -> float:
        """P of every value no more likely than `count` (ties within one part in TIES included):
        the two-sided p-value of an exact test whose statistic is the count."""
        index = count - self.start
        observed = self.weights[index] if 0 <= index < len(self.weights) else 0
        bound = observed * (TIES + 1)
        extreme = sum(weight for weight in self.weights if weight * TIES <= bound)
        return min(1.0, extreme / sum(self.weights))

    def _packed(self, width: int) -> int:
        return int.from_bytes(b"".join(weight.to_bytes(width, "little") for weight in self.weights), "little")


class Table(Data, frozen=True, kw_only=True):
    """A 2×2 table: one scenario's attempts that held and did not, now and in the baseline."""

    now: Tally
    baseline: Tally

    def distribution(self) -> Distribution:
        """The distribution of the attempts held now given the table's margins (the attempts judged
        in each run, the attempts held in both): hypergeometric, with exact integer weights."""
        held = self.now.held + self.baseline.held
        judged = self.now.judged + self.baseline.judged
        drawn = self.now.judged
        first = max(0, drawn - (judged - held))
        last = min(held, drawn)
        weights = tuple(
            math.comb(held, count) * math.comb(judged - held, drawn - count)
            for count in range(first, last + 1)
        )
        return Distribution(start=first, weights=weights)

    def drop(self) -> PValue:
        """Fisher's exact test, one-sided for a drop: the chance, with no change, of holding as
        rarely now as observed or more rarely."""
        return PValue(value=self.distribution().at_most(self.now.held))

    def gain(self) -> PValue:
        """Fisher's exact test, one-sided for a gain."""
        return PValue(value=self.distribution().at_least(self.now.held))

    def change(self) -> PValue:
        """Fisher's exact test, two-sided: the chance of a table no more likely than this one."""
        return PValue(value=self.distribution().as_likely(self.now.held))


class Strata(Data, frozen=True, kw_only=True):
    """One Table per scenario present and unchanged in both runs, for the exact stratified test
    (the exact Cochran–Mantel–Haenszel test of a common odds ratio of 1): given every scenario's
    margins, the attempts held now over all scenarios are distributed as the sum of the scenarios'
    independent hypergeometric counts. A scenario of one outcome only adds a constant; one scenario
    alone gives Fisher's exact test."""

    tables: tuple[Table, ...]

    def distribution(self) -> Distribution:
        """The distribution of the attempts held now over all strata, with no change; at least one
        stratum is needed. Summed pairwise, so the big integers stay balanced."""
        if not self.tables:
            raise ValueError("the distribution of no strata is not defined")
        level = [table.distribution() for table in self.tables]
        while len(level) > 1:
            pairs = range(0, len(level) - 1, 2)
            level = [level[i].plus(level[i + 1]) for i in pairs] + level[len(level) - len(level) % 2 :]
        return level[0]

    def held(self) -> int:
        """The attempts held now over all strata: the test's statistic."""
        return sum(table.now.held for table in self.tables)

    def drop(self) -> PValue | Unknown:
        """One-sided p-value for a drop: P(held now <= observed) given the margins."""
        if not self.tables:
            return Unknown()
        return PValue(value=self.distribution().at_most(self.held()))

    def gain(self) -> PValue | Unknown:
        """One-sided p-value for a gain: P(held now >= observed) given the margins."""
        if not self.tables:
            return Unknown()
        return PValue(value=self.distribution().at_least(self.held()))

    def change(self) -> PValue | Unknown:
        """Two-sided p-value: P of a total held now no more likely than the observed one."""
        if not self.tables:
            return Unknown()
        return PValue(value=self.distribution().as_likely(self.held()))

    def tails(self) -> tuple[PValue | Unknown, PValue | Unknown]:
        """The drop's and the gain's one-sided p-values, from one distribution."""
        if not self.tables:
            return Unknown(), Unknown()
        distribution = self.distribution()
        held = self.held()
        return PValue(value=distribution.at_most(held)), PValue(value=distribution.at_least(held))
