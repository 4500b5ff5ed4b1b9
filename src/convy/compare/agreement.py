"""How well a judge agrees with a person (decision 40): over decisions on claims, the share they
agree on, Cohen's κ with a 95% bootstrap interval over labelled attempts (seeded, so the same
labels give the same interval), false passes and false fails; over whole attempts, the judge's
sensitivity and specificity. Every figure is over pass/fail; None where it has nothing to count.

κ is undefined (None) where the person's decisions are all one way (so wherever the chance agreement
is 1): such labels cannot tell a judge that tells holds from misses apart from one that says the same to
all. A judge whose decisions are all one way against labels both ways is measured: κ 0."""

from __future__ import annotations

import random
from collections.abc import Sequence

import msgspec

from convy.data import Data

RESAMPLES = 2000
"""How many bootstrap resamples κ's interval is drawn from."""
LEVEL = 0.95
"""The interval's confidence level."""


class Paired(msgspec.Struct, frozen=True):
    """One decision twice: the person's pass and the judge's."""

    person: bool
    judge: bool


class Agreed(Data, frozen=True, kw_only=True):
    """The figures of a set of labelled decisions: how many attempts and decisions, the share
    agreed, κ and its interval, false passes (the judge holds where the person says not, as a share
    of the person's "not") and false fails (the reverse, as a share of the person's "holds")."""

    labels: int
    decisions: int
    agreement: float | None = None
    kappa: float | None = None
    kappa_low: float | None = None
    kappa_high: float | None = None
    false_pass: float | None = None
    false_fail: float | None = None
    undefined_resamples: int = 0
    """How many of the bootstrap's resamples had an undefined κ: left out of the interval, never
    counted as agreement."""


class Agreement(msgspec.Struct, frozen=True):
    """The decisions of labelled attempts (one tuple of Paired per attempt) and the bootstrap's
    seed."""

    attempts: tuple[tuple[Paired, ...], ...]
    seed: int = 0

    @property
    def pairs(self) -> tuple[Paired, ...]:
        return tuple(pair for attempt in self.attempts for pair in attempt)

    def agreed(self) -> Agreed:
        pairs = self.pairs
        kappa = self.kappa(pairs)
        low, high, undefined = self.interval(kappa)
        nots = [pair for pair in pairs if not pair.person]
        holds = [pair for pair in pairs if pair.person]
        return Agreed(
            labels=sum(1 for attempt in self.attempts if attempt),
            decisions=len(pairs),
            agreement=sum(pair.person == pair.judge for pair in pairs) / len(pairs) if pairs else None,
            kappa=kappa,
            kappa_low=low,
            kappa_high=high,
            false_pass=sum(pair.judge for pair in nots) / len(nots) if nots else None,
            false_fail=sum(not pair.judge for pair in holds) / len(holds) if holds else None,
            undefined_resamples=undefined,
        )

    def kappa(self, pairs: Sequence[Paired]) -> float | None:
        """Cohen's κ: (observed − chance agreement) / (1 − chance); None without decisions and where
        it is undefined: the person's decisions all one way (which chance 1 needs too)."""
        count = len(pairs)
        if not count:
            return None
        observed = sum(pair.person == pair.judge for pair in pairs) / count
        person = sum(pair.person for pair in pairs) / count
        judge = sum(pair.judge for pair in pairs) / count
        chance = person * judge + (1 - person) * (1 - judge)
        if person in (0, 1):
            return None
        return (observed - chance) / (1 - chance)

    def interval(self, kappa: float | None) -> tuple[float | None, float | None, int]:
        """κ's 95% interval: the percentiles of κ over RESAMPLES resamples of the labelled attempts
        (with replacement), widened where needed so it contains κ itself; and how many resamples
        had an undefined κ (left out). No interval where κ is undefined or every resample's is."""
        attempts = [attempt for attempt in self.attempts if attempt]
        if kappa is None or not attempts:
            return None, None, 0
        draw = random.Random(self.seed)
        drawn = [
            self.kappa([pair for attempt in draw.choices(attempts, k=len(attempts)) for pair in attempt])
            for _ in range(RESAMPLES)
        ]
        values = sorted(value for value in drawn if value is not None)
        undefined = len(drawn) - len(values)
        if not values:
            return None, None, undefined
        tail = (1 - LEVEL) / 2
        low = values[int(tail * (len(values) - 1))]
        high = values[round((1 - tail) * (len(values) - 1))]
        return min(low, kappa), max(high, kappa), undefined


class Separation(msgspec.Struct, frozen=True):
    """Whole attempts, each Paired on whether it holds: the judge's sensitivity (it holds the attempt
    where the person holds it) and specificity (it does not where the person does not)."""

    attempts: tuple[Paired, ...]

    def sensitivity(self) -> float | None:
        held = [pair for pair in self.attempts if pair.person]
        return sum(pair.judge for pair in held) / len(held) if held else None

    def specificity(self) -> float | None:
        missed = [pair for pair in self.attempts if not pair.person]
        return sum(not pair.judge for pair in missed) / len(missed) if missed else None
