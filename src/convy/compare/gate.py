"""Whether a pull request passes (see docs/gate.md): the comparison's verdict — pass, fail or
inconclusive — with the rule that decided, the numbers behind it and the commonest cause.

Inconclusive when nothing was judged, too many attempts have no verdict or the judge is not trusted
against the project's labels; fail when the agent failed too many attempts, when no judged attempt
held, when the pass rate is under the floor, or when the drop is more than allowed and significant;
else pass.

Every threshold is compared exactly: counts as fractions, settings read as the decimals they were
written as, so a drop of exactly 5 points is not "more than" max-drop 0.05. The floor and the drop
read pass rates that weigh every scenario the same (decision 27); nothing-held, max-failed and
max-no-verdict count attempts."""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

import msgspec

from convy.compare.comparison import Comparison, NoBaseline, ScenarioChange
from convy.compare.parts import Reason
from convy.compare.statistics import PValue
from convy.compare.summary import Summary
from convy.data import Data
from convy.project.settings import MIN_JUDGE_KAPPA, Unchosen
from convy.words import Plural

Verdict = Literal["pass", "fail", "inconclusive"]

FELL = ("regressed", "lower")
"""The statuses of a scenario that fell from the baseline."""

EXIT_CODES: dict[str, int] = {"pass": 0, "fail": 1, "inconclusive": 3}

MESSAGE = 200
"""Characters of a service's message quoted in the gate's cause."""


class GateDecision(Data, frozen=True, kw_only=True):
    """What the gate decided, the rule that decided it, the sentence that explains it, and the
    commonest cause of what went wrong (a reason, its HTTP status and message; empty when none)."""

    verdict: Verdict
    rule: str
    explanation: str
    alpha: float = 0.05
    """The significance level the gate used: a change is significant when its p-value is below it."""
    cause: str = ""
    """The commonest reason attempts failed or got no verdict, with its status and message (one line)."""
    labels_wanted: int = 0
    """How many more labelled decisions the judge needs before `judge-untrusted` holds it to the
    default min-judge-kappa (0: none: the rule applies, or is off)."""

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    @property
    def on_drop(self) -> bool:
        """Whether the gate failed on the drop versus the baseline."""
        return self.verdict == "fail" and self.rule == "max-drop"

    def regressions(self, comparison: Comparison) -> tuple[ScenarioChange, ...]:
        """The scenarios under "Regressions": the regressed ones, and when the gate failed on the drop
        the lower ones too (together they make up the drop), in the comparison's order."""
        if self.on_drop:
            return tuple(s for s in comparison.ordered() if s.status in ("regressed", "lower"))
        return tuple(s for s in comparison.ordered() if s.status == "regressed")

    def within_noise(self, comparison: Comparison) -> tuple[ScenarioChange, ...]:
        """The lower scenarios not listed above them: under a passing verdict, those not under
        "Regressions" (a failing verdict lists every scenario that fell in `failed_first`)."""
        return () if self.on_drop or self.verdict != "pass" else comparison.lower()

    def failed_first(self, comparison: Comparison) -> tuple[ScenarioChange, ...]:
        """What a failing or inconclusive verdict names first (see docs/gate.md), whatever rule decided:
        the scenarios that did not hold (an attempt judged and not held) or fell (regressed or
        lower), worst first: the largest fall from the baseline's share, then the lowest share now,
        then in the comparison's order."""
        fallen = [s for s in comparison.ordered() if s.now.held < s.now.judged or s.status in FELL]
        return tuple(sorted(fallen, key=lambda s: (-Fall(s).points(), Fall(s).now())))

    def significant_drop(self, comparison: Comparison) -> bool:
        """Whether the pooled drop is significant: then no scenario that fell is "within noise"."""
        return isinstance(comparison.p_drop, PValue) and comparison.p_drop.below(self.alpha)


class Fall(msgspec.Struct, frozen=True):
    """How far a scenario's share fell from the baseline's (0 when it is not in both), and its
    share now (1 when nothing was judged)."""

    scenario: ScenarioChange

    def now(self) -> Fraction:
        now = self.scenario.now
        return Fraction(now.held, now.judged) if now.judged else Fraction(1)

    def points(self) -> Fraction:
        before = self.scenario.baseline
        return Fraction(before.held, before.judged) - self.now() if before.judged else Fraction(0)


class Cause(msgspec.Struct, frozen=True):
    """The commonest of some reasons as one line: `http_400 ×12 (HTTP 400): Invalid model name`."""

    reasons: tuple[Reason, ...]

    def text(self) -> str:
        if not self.reasons:
            return ""
        first = self.reasons[0]
        status = f" (HTTP {first.status})" if first.status else ""
        message = " ".join(first.message.split())
        if len(message) > MESSAGE:
            message = message[: MESSAGE - 1] + "…"
        return f"{first.reason} ×{first.count}{status}" + (f": {message}" if message else "")


class Gate(msgspec.Struct, frozen=True, kw_only=True):
    """The thresholds: floor, largest allowed drop, significance level, most attempts without verdict,
    most attempts the agent failed, the judge's least κ against the labels (0: off; left at its
    default, Unchosen, it applies only from `min_labels` decisions on and where κ is defined) and
    the least labelled decisions it is measured on."""

    min_pass_rate: float = 0.0
    max_drop: float = 0.05
    alpha: float = 0.05
    max_no_verdict: float = 0.2
    max_failed: float = 0.1
    min_judge_kappa: float = MIN_JUDGE_KAPPA
    min_labels: int = 20

    def exact(self, value: float) -> Fraction:
        """A setting as the decimal it was written as (0.05 is exactly 1/20)."""
        return Fraction(repr(value))

    def beyond(self, count: int, attempts: int, most: float, rule: str, said: str) -> str:
        """When `count` of the attempts is a larger share than `rule` allows (`most`): `said`, its
        `{share}` the count with its share (`3 of 10 attempts (30.0%)`), and the limit passed; ""
        within it."""
        if Fraction(count, attempts) <= self.exact(most):
            return ""
        share = f"{count} of {Plural(attempts, 'attempt').text()} ({count / attempts * 100:.1f}%)"
        return f"{said.format(share=share)}, more than {rule} {most * 100:.1f}%"

    def decided(self, verdict: Verdict, rule: str, explanation: str, cause: str = "") -> GateDecision:
        return GateDecision(
            verdict=verdict, rule=rule, explanation=explanation, alpha=self.alpha, cause=cause
        )

    def decision(self, comparison: Comparison) -> GateDecision:
        """The verdict, with how many more labelled decisions the judge needs (`labels_wanted`)."""
        decision = self.played(comparison)
        wanted = self.labels_wanted(comparison.now)
        return msgspec.structs.replace(decision, labels_wanted=wanted) if wanted else decision

    def played(self, comparison: Comparison) -> GateDecision:
        """The verdict on what was played; when fail-fast stopped the run, its cause ends the
        explanation. A run the budget stopped is inconclusive (rule `budget`) unless it fails on
        what was played: it is never a pass."""
        decision = self.decided_on(comparison)
        stopped = comparison.now.stopped
        if not stopped:
            return decision
        if comparison.now.over_budget:
            told = f"stopped: {comparison.now.stop()}"
            if decision.verdict == "fail":
                return msgspec.structs.replace(decision, explanation=f"{decision.explanation}; {told}")
            return self.decided(
                "inconclusive", "budget", f"{told}; on what was played: {decision.explanation}"
            )
        return msgspec.structs.replace(
            decision, explanation=f"{decision.explanation}; fail-fast stopped the run: {stopped}", cause=""
        )

    def decided_on(self, comparison: Comparison) -> GateDecision:
        now = comparison.now
        unjudged = Cause(now.no_verdict).text()
        if not now.attempts:
            return self.decided("inconclusive", "no-attempts", "the run has no attempts")
        if not now.tally.judged:
            return self.decided(
                "inconclusive",
                "no-verdicts",
                f"none of the {Plural(now.attempts, 'attempt').text()} has a verdict: the "
                "pass rate is unknown",
                unjudged,
            )
        said = "{share} have no verdict"
        unheard = self.beyond(
            now.no_verdict_attempts, now.attempts, self.max_no_verdict, "max-no-verdict", said
        )
        if unheard:
            return self.decided("inconclusive", "max-no-verdict", unheard, unjudged)
        untrusted = self.untrusted(now)
        if untrusted:
            return self.decided("inconclusive", "judge-untrusted", untrusted)
        failed = Cause(now.failed).text()
        said = "the agent failed {share}"
        failing = self.beyond(now.failed_attempts, now.attempts, self.max_failed, "max-failed", said)
        if failing:
            return self.decided("fail", "max-failed", failing, failed)
        if not now.tally.held:
            return self.decided(
                "fail",
                "nothing-held",
                f"none of the {now.tally.judged} judged {Plural(now.tally.judged, 'attempt').word} held",
                failed or self.claims(now),
            )
        rate = now.exact_rate()
        if self.min_pass_rate > 0 and rate is not None and rate < self.exact(self.min_pass_rate):
            averaged = " (averaged over scenarios)" if now.averaged else ""
            return self.decided(
                "fail",
                "min-pass-rate",
                f"pass rate {now.rate.text()}{averaged} is under min-pass-rate "
                f"{self.min_pass_rate * 100:.1f}%",
                failed or self.claims(now),
            )
        return self.against_baseline(comparison)

    @property
    def chosen(self) -> bool:
        """Whether min-judge-kappa was given rather than left at its default."""
        return not isinstance(self.min_judge_kappa, Unchosen)

    def untrusted(self, now: Summary) -> str:
        """Why the judge is not trusted (`judge-untrusted`): κ under min-judge-kappa on at least
        min-labels decisions; with a value given, also too few decisions, no labels, or κ undefined
        (the labels all one way); "" when trusted, the rule is off (0) or its default waits for
        labels."""
        if self.min_judge_kappa <= 0:
            return ""
        judge = now.calibration
        setting = f"min-judge-kappa {self.min_judge_kappa:.2f}" + ("" if self.chosen else " (the default)")
        if not judge.measured:
            if not self.chosen:
                return ""
            return f"the judge is not measured against labels (convy label), and {setting} is set"
        count = Plural(judge.decisions, "labelled decision").text()
        if judge.decisions < self.min_labels or judge.kappa is None:
            if not self.chosen:
                return ""
            if judge.decisions < self.min_labels:
                kappa = "(undefined)" if judge.kappa is None else f"{judge.kappa:.2f}"
                return (
                    f"the judge's κ {kappa} rests on {count}, fewer than min-labels {self.min_labels} "
                    f"({setting})"
                )
            return (
                f"the judge's κ is undefined on {count}: the labels cannot measure the judge "
                f"(every labelled decision is the same), so it is not shown to reach {setting}; "
                "label attempts that fail (convy label --failing)"
            )
        if judge.kappa < self.min_judge_kappa:
            return f"the judge's κ {judge.kappa:.2f} on {count} is under {setting}"
        return ""

    def labels_wanted(self, now: Summary) -> int:
        """How many more labelled decisions the judge needs before the default min-judge-kappa
        holds it (0 when a value was given, the rule is off, or enough are labelled)."""
        judge = now.calibration
        if self.chosen or self.min_judge_kappa <= 0 or not judge.measured:
            return 0
        return max(0, self.min_labels - judge.decisions)

    def claims(self, now: Summary) -> str:
        """The agent's commonest way of not holding, when it is failed claims."""
        agent = next((p for p in now.parties if p.party == "agent"), None)
        if agent is None:
            return ""
        if agent.reason == "claims_failed":
            message = f"{'check' if agent.check else 'judge'}: {agent.message}" if agent.message else ""
            return Cause((Reason(reason="failed claims", count=agent.count, message=message),)).text()
        return Cause((Reason(reason=agent.reason, count=agent.count, message=agent.message),)).text()

    def against_baseline(self, comparison: Comparison) -> GateDecision:
        match comparison.baseline:
            case NoBaseline(why=why):
                return self.decided(
                    "pass",
                    "floor-only",
                    f"{why}: gated on the floor only; pass rate {comparison.now.rate.text()}",
                )
            case _:
                pass
        drop = comparison.exact_drop()
        p = comparison.p_drop
        if drop is None:
            return self.decided(
                "pass",
                "nothing-comparable",
                "no scenario is common and unchanged with judged attempts in both runs",
            )
        shown = (
            f"{float(drop) * 100:.1f} points" if drop >= 0 else f"a gain of {float(-drop) * 100:.1f} points"
        )
        more = drop > self.exact(self.max_drop)
        match p:
            case PValue(value=value) if more and value < self.alpha:
                return self.decided(
                    "fail",
                    "max-drop",
                    f"the pass rate dropped {shown} versus the baseline, more than max-drop "
                    f"{self.max_drop * 100:.1f} points, and the drop is significant "
                    f"({p.text()} < alpha {self.alpha:g})",
                    self.claims(comparison.now),
                )
            case _:
                pass
        if more:
            return self.decided(
                "pass",
                "not-significant",
                f"the pass rate dropped {shown}, more than max-drop {self.max_drop * 100:.1f} points, "
                f"but the drop is not significant ({p.text()}, alpha {self.alpha:g})",
            )
        return self.decided(
            "pass",
            "within-max-drop",
            f"change versus the baseline: {shown}, within max-drop {self.max_drop * 100:.1f} points",
        )
