"""The pass rate corrected for the judge (decision 43): the judged attempts whose checks all passed,
times (q + sp − 1) / (se + sp − 1) clipped to [0, 1] (se, sp: the judge's sensitivity and
specificity on whole labelled attempts, q: the share the judge held), with a seeded bootstrap
interval over attempts and labels; shown, never gated on, and why not when it is not shown."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

import msgspec

from convy.data import Data
from convy.play.outcome import Outcome, Verdict
from convy.store.judgerecord import HeldTwice, JudgeRecord

RESAMPLES = 2000
"""How many bootstrap resamples the interval is drawn from."""
LEVEL = 0.95
"""The interval's confidence level."""
SEPARATION = 0.5
"""The least se + sp − 1 a judge needs for its errors to be corrected (Youden's J)."""
MIN_LABELS = 20
"""The `min-labels` setting's default."""


class CorrectedRate(Data, frozen=True, kw_only=True):
    """The corrected pass rate with its interval (`value` None: not shown, `why` says why), the
    labelled decisions and attempts it rests on, se and sp."""

    value: float | None = None
    low: float | None = None
    high: float | None = None
    why: str = "no labels"
    decisions: int = 0
    labels: int = 0
    sensitivity: float | None = None
    specificity: float | None = None

    @property
    def shown(self) -> bool:
        return self.value is not None


NOT_CORRECTED = CorrectedRate()
"""A run whose judge was not measured against labels."""


class JudgedAttempts(msgspec.Struct):
    """The judged attempts of a run, counted while they stream past: how many, how many had every
    check pass, and of those how many the judge held."""

    judged: int = 0
    checked: int = 0
    held: int = 0

    def add(self, outcome: Outcome) -> None:
        match outcome.decision:
            case Verdict(claims=claims):
                self.judged += 1
                if all(result.passed for result in claims if result.checked):
                    self.checked += 1
                    self.held += all(result.passed for result in claims if not result.checked)
            case _:
                pass


class Correction(msgspec.Struct, frozen=True):
    """The judged attempts (as counts: checks failed, checks passed and held, checks passed and not
    held) and the whole labelled attempts to correct them with."""

    attempts: JudgedAttempts
    labels: tuple[HeldTwice, ...]

    @classmethod
    def of(cls, attempts: JudgedAttempts, calibration: JudgeRecord) -> Correction:
        return cls(attempts, calibration.whole)

    def estimate(self, checked: int, held: int, judged: int, labels: Sequence[HeldTwice]) -> float | None:
        """The corrected rate of these counts and labels; None where se or sp is unknown, or
        se + sp − 1 is not above 0."""
        se, sp = self.rates(labels)
        if se is None or sp is None or se + sp - 1 <= 0 or not judged:
            return None
        if not checked:
            return 0.0
        q = held / checked
        return checked / judged * min(1.0, max(0.0, (q + sp - 1) / (se + sp - 1)))

    def rates(self, labels: Sequence[HeldTwice]) -> tuple[float | None, float | None]:
        """se (the judge holds where the person holds) and sp (it does not where the person does
        not)."""
        holds = [label.judge for label in labels if label.person]
        nots = [not label.judge for label in labels if not label.person]
        return (sum(holds) / len(holds) if holds else None, sum(nots) / len(nots) if nots else None)

    @property
    def seed(self) -> int:
        attempts = self.attempts
        counts = (attempts.judged, attempts.checked, attempts.held, self.labels)
        return int.from_bytes(hashlib.sha256(msgspec.json.encode(counts)).digest()[:8], "big")

    def corrected(self, min_labels: int = MIN_LABELS) -> CorrectedRate:
        labels = self.labels
        decisions = sum(label.claims for label in labels)
        se, sp = self.rates(labels)
        base = CorrectedRate(decisions=decisions, labels=len(labels), sensitivity=se, specificity=sp)
        if not labels:
            return msgspec.structs.replace(base, why="no labels chosen at random with every claim labelled")
        if decisions < min_labels:
            return msgspec.structs.replace(
                base, why=f"too few labels: {decisions} labelled decisions, min-labels is {min_labels}"
            )
        if se is None or sp is None or se + sp - 1 < SEPARATION:
            said = "unknown" if se is None or sp is None else f"{se + sp - 1:.2f}"
            return msgspec.structs.replace(base, why=f"se + sp − 1 is {said}, below {SEPARATION}")
        a = self.attempts
        value = self.estimate(a.checked, a.held, a.judged, labels)
        if value is None:
            return msgspec.structs.replace(base, why="no judged attempt")
        low, high = self.interval(value)
        return msgspec.structs.replace(base, value=value, low=low, high=high, why="")

    def interval(self, value: float) -> tuple[float, float]:
        """The percentiles of the estimate over RESAMPLES resamples of the attempts and of the labels
        (each with replacement), widened where needed so it contains the estimate."""
        a = self.attempts
        draw = random.Random(self.seed)
        kinds = [0] * (a.judged - a.checked) + [1] * (a.checked - a.held) + [2] * a.held
        values: list[float] = []
        for _ in range(RESAMPLES):
            drawn = draw.choices(kinds, k=len(kinds))
            held = drawn.count(2)
            checked = held + drawn.count(1)
            estimate = self.estimate(checked, held, len(drawn), draw.choices(self.labels, k=len(self.labels)))
            if estimate is not None:
                values.append(estimate)
        if not values:
            return value, value
        values.sort()
        tail = (1 - LEVEL) / 2
        low = values[int(tail * (len(values) - 1))]
        high = values[round((1 - tail) * (len(values) - 1))]
        return min(low, value), max(high, value)
