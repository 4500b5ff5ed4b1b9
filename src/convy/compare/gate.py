"""Gate: the comparison's verdict — pass, fail or inconclusive — with the rule that decided and the
numbers behind it (DESIGN §7: inconclusive first, then the fail rules, else pass)."""

from __future__ import annotations

from typing import Literal

import msgspec

from convy.compare.comparison import Comparison, NoBaseline
from convy.compare.statistics import PValue, Rate, Share, Unknown
from convy.data import Data

Verdict = Literal["pass", "fail", "inconclusive"]

EXIT_CODES: dict[str, int] = {"pass": 0, "fail": 1, "inconclusive": 3}


class GateDecision(Data, frozen=True, kw_only=True):
    """What the gate decided, the rule that decided it, and the sentence that explains it."""

    verdict: Verdict
    rule: str
    explanation: str
    alpha: float = 0.05
    """The significance level the gate used: a change is significant when its p-value is below it."""

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]


class Gate(msgspec.Struct, frozen=True, kw_only=True):
    """The thresholds: floor, largest allowed drop, significance level, most attempts without verdict."""

    min_pass_rate: float = 0.0
    max_drop: float = 0.05
    alpha: float = 0.05
    max_no_verdict: float = 0.2

    def decision(self, comparison: Comparison) -> GateDecision:
        now = comparison.now
        match now.no_verdict_share:
            case Share(value=share) if share > self.max_no_verdict:
                unjudged = now.no_verdict_attempts
                return GateDecision(
                    alpha=self.alpha,
                    verdict="inconclusive",
                    rule="max-no-verdict",
                    explanation=(
                        f"{unjudged} of {now.attempts} attempts ({share * 100:.1f}%) have no verdict, "
                        f"more than max-no-verdict {self.max_no_verdict * 100:.1f}%"
                    ),
                )
            case Unknown():
                return GateDecision(
                    alpha=self.alpha,
                    verdict="inconclusive",
                    rule="no-attempts",
                    explanation="the run has no attempts",
                )
            case _:
                pass
        match now.rate:
            case Unknown():
                return GateDecision(
                    alpha=self.alpha,
                    verdict="inconclusive",
                    rule="no-verdicts",
                    explanation="no attempt was judged: the pass rate is unknown",
                )
            case Rate(value=value) if self.min_pass_rate > 0 and value < self.min_pass_rate:
                return GateDecision(
                    alpha=self.alpha,
                    verdict="fail",
                    rule="min-pass-rate",
                    explanation=(
                        f"pass rate {now.rate.text()} is under min-pass-rate {self.min_pass_rate * 100:.1f}%"
                    ),
                )
            case _:
                pass
        return self.against_baseline(comparison)

    def against_baseline(self, comparison: Comparison) -> GateDecision:
        match comparison.baseline:
            case NoBaseline(why=why):
                return GateDecision(
                    alpha=self.alpha,
                    verdict="pass",
                    rule="floor-only",
                    explanation=f"{why}: gated on the floor only; pass rate {comparison.now.rate.text()}",
                )
            case _:
                pass
        drop = comparison.drop
        p = comparison.p_drop
        if drop is None:
            return GateDecision(
                alpha=self.alpha,
                verdict="pass",
                rule="nothing-comparable",
                explanation="no scenario is common and unchanged with judged attempts in both runs",
            )
        shown = f"{drop * 100:.1f} points" if drop >= 0 else f"a gain of {-drop * 100:.1f} points"
        match p:
            case PValue(value=value) if drop > self.max_drop and value < self.alpha:
                return GateDecision(
                    alpha=self.alpha,
                    verdict="fail",
                    rule="max-drop",
                    explanation=(
                        f"the pass rate dropped {shown} versus the baseline, more than max-drop "
                        f"{self.max_drop * 100:.1f} points, and the drop is significant "
                        f"({p.text()} < alpha {self.alpha})"
                    ),
                )
            case _:
                pass
        if drop > self.max_drop:
            return GateDecision(
                alpha=self.alpha,
                verdict="pass",
                rule="not-significant",
                explanation=(
                    f"the pass rate dropped {shown}, more than max-drop {self.max_drop * 100:.1f} points, "
                    f"but the drop is not significant ({p.text()}, alpha {self.alpha})"
                ),
            )
        return GateDecision(
            alpha=self.alpha,
            verdict="pass",
            rule="within-max-drop",
            explanation=(
                f"change versus the baseline: {shown}, within max-drop {self.max_drop * 100:.1f} points"
            ),
        )
