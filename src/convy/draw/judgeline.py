"""The judge as measured against the project's labels (decision 42), in one line the comment shows
right under its verdict (the console too): κ with its interval, or that it is undefined (never
1.00), the labelled decisions it rests on, false passes and false fails, how many more labelled
decisions the gate waits for; or that it was not measured. And the corrected pass rate's line."""

from __future__ import annotations

import msgspec

from convy.compare.agreement import RESAMPLES
from convy.compare.corrected import CorrectedRate
from convy.store.judgerecord import JudgeRecord
from convy.words import Plural

NOT_MEASURED_LINE = "Judge: not measured against labels (convy label)"


class KappaText(msgspec.Struct, frozen=True, kw_only=True):
    """Cohen's κ as convy prints it: `κ 0.81 (0.66–0.92)`, with the bootstrap's resamples whose κ
    was undefined when there are any; `κ undefined` where the labels are all one way (never 1.00);
    `κ —` without decisions."""

    kappa: float | None
    low: float | None
    high: float | None
    decisions: int
    undefined_resamples: int = 0

    @property
    def undefined(self) -> bool:
        return self.kappa is None and self.decisions > 0

    def why(self) -> str:
        """Why κ is undefined, and what to do about it."""
        return (
            "every labelled decision is the same, so the labels cannot measure the judge; "
            "label attempts that fail (convy label --failing)"
        )

    def text(self) -> str:
        if self.kappa is None:
            return "κ undefined" if self.decisions else "κ —"
        left = (
            f"; {self.undefined_resamples:,} of {RESAMPLES:,} resamples undefined"
            if self.undefined_resamples
            else ""
        )
        interval = (
            f" ({self.number(self.low)}–{self.number(self.high)}{left})"
            if self.low is not None and self.high is not None
            else f" ({left[2:]})"
            if left
            else ""
        )
        return f"κ {self.number(self.kappa)}{interval}"

    def number(self, value: float) -> str:
        return f"{round(value, 2) + 0.0:.2f}"


class JudgeLine(msgspec.Struct, frozen=True):
    """The judge's line of a run's calibration, its corrected pass rate, and how many more labelled
    decisions the gate waits for before it holds the judge to min-judge-kappa (0: none)."""

    calibration: JudgeRecord
    corrected: CorrectedRate = CorrectedRate()
    wanted: int = 0

    def text(self) -> str:
        judge = self.calibration
        if not judge.measured:
            return NOT_MEASURED_LINE
        count = Plural(judge.decisions, "labelled decision").text()
        rates = f"false passes {self.share(judge.false_pass)} · false fails {self.share(judge.false_fail)}"
        more = (
            f" · {Plural(self.wanted, 'more labelled decision').text()} would measure the judge (convy label)"
            if self.wanted
            else ""
        )
        kappa = KappaText(
            kappa=judge.kappa,
            low=judge.kappa_low,
            high=judge.kappa_high,
            decisions=judge.decisions,
            undefined_resamples=judge.undefined_resamples,
        )
        if kappa.undefined:
            return f"Judge: {kappa.text()} on {count}: {kappa.why()} · {rates}{more}"
        return f"Judge: {kappa.text()} on {count} · {rates}{more}"

    def rate(self) -> str:
        """The corrected pass rate's line ("" when it is not shown)."""
        corrected = self.corrected
        if corrected.value is None:
            return ""
        low, high = corrected.low, corrected.high
        interval = f" ({low * 100:.1f}–{self.percent(high)})" if low is not None and high is not None else ""
        return (
            f"Pass rate corrected for the judge: {self.percent(corrected.value)}{interval}, from "
            f"{Plural(corrected.decisions, 'labelled decision').text()} (shown, never gated on)"
        )

    def share(self, value: float | None) -> str:
        return "—" if value is None else f"{value:.0%}"

    def percent(self, value: float) -> str:
        return f"{value * 100:.1f}%"
