"""The judge as measured against the project's labels (see docs/labels.md), in one line the comment shows
right under its verdict (the console too): κ with its interval, the labelled decisions it rests on,
false passes and false fails; or that it was not measured. And the pass rate corrected for the
judge's errors, when it is shown."""

from __future__ import annotations

import msgspec

from convy.compare.corrected import CorrectedRate
from convy.store.judgerecord import JudgeRecord
from convy.words import Plural

NOT_MEASURED_LINE = "Judge: not measured against labels (convy label)"


class JudgeLine(msgspec.Struct, frozen=True):
    """The judge's line of a run's calibration, and its corrected pass rate."""

    calibration: JudgeRecord
    corrected: CorrectedRate = CorrectedRate()

    def text(self) -> str:
        judge = self.calibration
        if not judge.measured:
            return NOT_MEASURED_LINE
        kappa = "—" if judge.kappa is None else self.number(judge.kappa)
        interval = (
            f" ({self.number(judge.kappa_low)}–{self.number(judge.kappa_high)})"
            if judge.kappa_low is not None and judge.kappa_high is not None
            else ""
        )
        return (
            f"Judge: κ {kappa}{interval} on {Plural(judge.decisions, 'labelled decision').text()} · "
            f"false passes {self.share(judge.false_pass)} · false fails {self.share(judge.false_fail)}"
        )

    def rate(self) -> str:
        """The corrected pass rate's line ("" when it is not shown)."""
        corrected = self.corrected
        if corrected.value is None:
            return ""
        low, high = corrected.low, corrected.high
        interval = (
            f" ({low * 100:.1f}–{self.percent(high)})" if low is not None and high is not None else ""
        )
        return (
            f"Pass rate corrected for the judge: {self.percent(corrected.value)}{interval}, from "
            f"{Plural(corrected.decisions, 'labelled decision').text()} (shown, never gated on)"
        )

    def number(self, value: float) -> str:
        return f"{round(value, 2) + 0.0:.2f}"

    def share(self, value: float | None) -> str:
        return "—" if value is None else f"{value:.0%}"

    def percent(self, value: float) -> str:
        return f"{value * 100:.1f}%"
