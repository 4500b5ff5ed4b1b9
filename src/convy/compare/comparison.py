"""How a run compares with its baseline (see docs/gate.md), scenario by scenario and as a whole: each
scenario's status with its one-sided Fisher p-value, whether the overall change is real, the drop in
pass rate, and the deltas of times and tokens.

The statuses are regressed, lower, improved, higher, unchanged, new, removed, changed and not
played. The overall change is judged by the exact stratified test over the scenarios common,
unchanged and judged in both runs, and the drop is taken over exactly those scenarios as an exact
fraction of counts, each scenario weighing the same in both runs (decision 27)."""

from __future__ import annotations

from fractions import Fraction
from typing import Literal, get_args

import msgspec

from convy.compare.adaptive import Designed
from convy.compare.attacks import AttackChange, Attacked
from convy.compare.parts import FailingClaim, Reason, ScenarioSummary, Spread
from convy.compare.staged import Played, Staged, Stages
from convy.compare.statistics import Averaged, PValue, Rate, Strata, Table, Tally, Unknown
from convy.compare.summary import Summary
from convy.data import Data, Tagged
from convy.errors import ConvyError

Status = Literal[
    "regressed",
    "lower",
    "changed",
    "new",
    "removed",
    "not played",
    "improved",
    "higher",
    "rejudged",
    "unchanged",
]
STATUSES: tuple[Status, ...] = get_args(Status)
"""Every status, in the order the comment lists scenarios: regressions first. `regressed` and
`improved`: the scenario's own one-sided Fisher p is below alpha; `lower` and `higher`: fewer (more) of
its attempts held, not significantly; `not played`: left out of this run by `match` or a shard;
`rejudged`: its claims, checks or judge changed but not its dialogue, so the baseline's transcripts
were judged again the way this run's are, and it is compared (in the test like `unchanged`)."""
ORDER: dict[str, int] = {status: place for place, status in enumerate(STATUSES)}


class NoBaseline(Tagged, frozen=True, kw_only=True, tag="no_baseline"):
    """There is no baseline run: the gate decides on the floor only. `why` says what was looked at."""

    why: str = "no baseline run"


NO_BASELINE = NoBaseline()
"""No baseline, where one is optional (an argument's default)."""


class ScenarioChange(Data, frozen=True, kw_only=True):
    """One scenario now versus the baseline."""

    name: str
    status: Status
    now: Tally
    baseline: Tally
    now_rate: Rate | Unknown
    baseline_rate: Rate | Unknown
    p: PValue | Unknown
    failing: tuple[FailingClaim, ...] = ()
    failures: tuple[Reason, ...] = ()
    """Now, the commonest reason the agent failed its attempts, with the service's words."""
    file: str = ""
    line: int = 0
    category: str = ""
    """An attack scenario's category; "" not an attack."""


class Delta(Data, frozen=True, kw_only=True):
    """A time or token figure's median now and in the baseline, and the change (None: unknown)."""

    figure: str
    unit: str
    now: float | None
    baseline: float | None
    change: float | None


class Comparison(Data, frozen=True, kw_only=True):
    """A run compared with its baseline: every figure the renderers and the gate read."""

    now: Summary
    baseline: Summary | NoBaseline
    scenarios: tuple[ScenarioChange, ...]
    common_now: Tally
    """The attempts of the scenarios the test uses (common, unchanged, judged in both runs), now."""
    common_baseline: Tally
    """The same scenarios' attempts in the baseline."""
    drop: float | None
    """The baseline's pass rate minus today's over the scenarios the test uses, each rate the mean
    of those scenarios' shares (Averaged); None when there are none. For showing: the gate compares
    `exact_drop()`."""
    p_drop: PValue | Unknown
    p_gain: PValue | Unknown
    deltas: tuple[Delta, ...]
    alpha: float = 0.05
    """The level at which a scenario's own change counts as regressed or improved."""
    common: tuple[Table, ...] = ()
    """The scenarios the test uses, each as its tallies now and in the baseline (the baseline's
    first round where it played adaptive repeats): what the drop is computed from."""
    averaged: bool = False
    """A pass rate shown, or the drop, is a mean of scenarios' shares because their numbers of
    judged attempts differ (in either run, or over the scenarios the test uses)."""

    def exact_drop(self) -> Fraction | None:
        """The drop as an exact fraction of the counts, so a 5-point drop is exactly 1/20: the mean
        of the baseline's shares minus the mean of today's, over the scenarios the test uses. With
        the same number judged in every one of them (in each run), the pooled counts' difference."""
        before = Averaged(tallies=tuple(t.baseline for t in self.common)).share()
        now = Averaged(tallies=tuple(t.now for t in self.common)).share()
        if now is None or before is None:
            return None
        return before - now

    def attacks(self) -> tuple[AttackChange, ...]:
        """The attacks by category (the catalogue's order): now, and the baseline's beside (played
        0 where it had none of that category, or there is no baseline); categories only the
        baseline played come last."""
        before = {a.category: a for a in self.baseline.attacks} if isinstance(self.baseline, Summary) else {}
        now = {a.category: a for a in self.now.attacks}
        lines = [
            AttackChange(now=a, baseline=before.get(a.category, Attacked(category=a.category)))
            for a in self.now.attacks
        ]
        lines += [
            AttackChange(now=Attacked(category=c, title=a.title, owasp=a.owasp), baseline=a)
            for c, a in before.items()
            if c not in now
        ]
        return tuple(lines)

    def regressions(self) -> tuple[ScenarioChange, ...]:
        """The scenarios whose own drop is significant."""
        return self.having("regressed")

    def lower(self) -> tuple[ScenarioChange, ...]:
        """The scenarios with fewer attempts holding than in the baseline, within noise."""
        return self.having("lower")

    def having(self, *statuses: Status) -> tuple[ScenarioChange, ...]:
        return tuple(s for s in self.scenarios if s.status in statuses)

    def ordered(self) -> tuple[ScenarioChange, ...]:
        """The scenarios as the comment lists them: regressions first, then by status, each group in
        declaration order."""
        return tuple(sorted(self.scenarios, key=lambda s: ORDER[s.status]))


class RunsDiffer(ConvyError, ValueError):
    """The two runs cannot be compared (different agents)."""


class Compared(msgspec.Struct, frozen=True):
    """Two summaries, to be compared."""

    now: Summary
    baseline: Summary | NoBaseline
    alpha: float = 0.05

    def comparison(self) -> Comparison:
        match self.baseline:
            case Summary(agent=agent) if agent != self.now.agent:
                raise RunsDiffer(
                    f"the runs are of different agents ({self.now.agent!r} now, {agent!r} in the baseline): "
                    "compare runs of one agent"
                )
            case Summary() as baseline:
                return self.against(baseline)
            case NoBaseline():
                pass
        changes = tuple(self.alone(s, "new") for s in self.now.scenarios)
        return Comparison(
            now=self.now,
            baseline=self.baseline,
            scenarios=changes,
            common_now=Tally(held=0, judged=0),
            common_baseline=Tally(held=0, judged=0),
            drop=None,
            p_drop=Unknown(),
            p_gain=Unknown(),
            deltas=self.deltas(None),
            alpha=self.alpha,
            averaged=self.now.averaged,
        )

    def against(self, baseline: Summary) -> Comparison:
        before = {s.name: s for s in baseline.scenarios}
        changes: list[ScenarioChange] = []
        tables: list[Table] = []
        for scenario in self.now.scenarios:
            old = before.get(scenario.name)
            if old is None:
                changes.append(self.alone(scenario, "new"))
            elif old.fingerprint != scenario.fingerprint:
                changes.append(self.paired(scenario, old, "changed", Unknown()))
            else:
                table = self.table(scenario, old, baseline)
                tables.append(table)
                changes.append(self.compared(scenario, old, table))
        now_names = {s.name for s in self.now.scenarios}
        left_out = set(self.now.left_out)
        changes.extend(
            self.gone(s, "not played" if s.name in left_out else "removed")
            for s in baseline.scenarios
            if s.name not in now_names
        )
        used = tuple(t for t in tables if t.now.judged and t.baseline.judged)
        common_now = Tally(held=sum(t.now.held for t in used), judged=sum(t.now.judged for t in used))
        common_before = Tally(
            held=sum(t.baseline.held for t in used), judged=sum(t.baseline.judged for t in used)
        )
        strata = Strata(tables=used)
        p_drop, p_gain = strata.tails()
        common = tuple(Table(now=t.now, baseline=t.baseline) for t in used)
        uneven = not (
            Averaged(tallies=tuple(t.now for t in used)).even()
            and Averaged(tallies=tuple(t.baseline for t in used)).even()
        )
        comparison = Comparison(
            now=self.now,
            baseline=baseline,
            scenarios=tuple(changes),
            common_now=common_now,
            common_baseline=common_before,
            drop=None,
            p_drop=p_drop,
            p_gain=p_gain,
            deltas=self.deltas(baseline),
            alpha=self.alpha,
            common=common,
            averaged=self.now.averaged or baseline.averaged or uneven,
        )
        exact = comparison.exact_drop()
        return msgspec.structs.replace(comparison, drop=None if exact is None else float(exact))

    def table(self, now: ScenarioSummary, old: ScenarioSummary, baseline: Summary) -> Table:
        """The scenario's 2×2 table for the tests. A baseline that played adaptive repeats in two
        rounds (before decision 28) counts only its first round (its further attempts were chosen by
        what it saw, against an older run); a run that played them gives the table of its design
        (decision 17). A run that played the scenario by stages gives the table of the stages
        (decision 28), knowing whether they were decided against this baseline and how a staged
        baseline's own were decided."""
        before = baseline.read(old)
        if self.now.stages and now.against is not None and now.stages:
            return self.staged(now, old, baseline, before)
        if self.now.max_repeat > self.now.repeat and not self.now.stages:
            return Designed(now=now.tally, baseline=before, first=now.first)
        return Table(now=now.tally, baseline=before)

    def staged(self, now: ScenarioSummary, old: ScenarioSummary, baseline: Summary, before: Tally) -> Staged:
        """The table of a scenario played by stages: decided against this very baseline (the same
        run, read the same) or against another tally, which is then a constant; the baseline's own
        stages (when it was staged, and not re-judged since) are decided against its own."""
        same = self.now.decided == baseline.key() and now.against == before
        played = Played(
            design=Stages(ends=self.now.stages, repeat=self.now.repeat),
            stages=now.stages,
            against=None if same else now.against,
        )
        prior = None
        if baseline.stages and old.against is not None and old.stages and not old.rejudged:
            design = Stages(ends=baseline.stages, repeat=baseline.repeat)
            prior = Played(design=design, stages=old.stages, against=old.against)
        return Staged(now=now.tally, baseline=before, played=played, before=prior)

    def compared(self, now: ScenarioSummary, old: ScenarioSummary, table: Table) -> ScenarioChange:
        if old.rejudged:
            return self.paired(now, old, "rejudged", self.p(table))
        if not table.now.judged or not table.baseline.judged:
            return self.paired(now, old, "unchanged", Unknown())
        share_now = Fraction(table.now.held, table.now.judged)
        share_before = Fraction(table.baseline.held, table.baseline.judged)
        if share_now < share_before:
            p = table.drop()
            return self.paired(now, old, "regressed" if p.below(self.alpha) else "lower", p)
        if share_now > share_before:
            p = table.gain()
            return self.paired(now, old, "improved" if p.below(self.alpha) else "higher", p)
        return self.paired(now, old, "unchanged", table.change())

    def p(self, table: Table) -> PValue | Unknown:
        """The scenario's Fisher p in the direction of its change (two-sided when none)."""
        if not table.now.judged or not table.baseline.judged:
            return Unknown()
        share_now = Fraction(table.now.held, table.now.judged)
        share_before = Fraction(table.baseline.held, table.baseline.judged)
        if share_now < share_before:
            return table.drop()
        if share_now > share_before:
            return table.gain()
        return table.change()

    def paired(
        self, now: ScenarioSummary, old: ScenarioSummary, status: Status, p: PValue | Unknown
    ) -> ScenarioChange:
        return ScenarioChange(
            name=now.name,
            status=status,
            now=now.tally,
            baseline=old.tally,
            now_rate=now.rate,
            baseline_rate=old.rate,
            p=p,
            failing=now.failing,
            failures=now.failures,
            file=now.file,
            line=now.line,
            category=now.category,
        )

    def alone(self, now: ScenarioSummary, status: Status) -> ScenarioChange:
        empty = Tally(held=0, judged=0)
        return ScenarioChange(
            name=now.name,
            status=status,
            now=now.tally,
            baseline=empty,
            now_rate=now.rate,
            baseline_rate=Unknown(),
            p=Unknown(),
            failing=now.failing,
            failures=now.failures,
            file=now.file,
            line=now.line,
            category=now.category,
        )

    def gone(self, old: ScenarioSummary, status: Status) -> ScenarioChange:
        return ScenarioChange(
            name=old.name,
            status=status,
            now=Tally(held=0, judged=0),
            baseline=old.tally,
            now_rate=Unknown(),
            baseline_rate=old.rate,
            p=Unknown(),
            file=old.file,
            line=old.line,
            category=old.category,
        )

    def deltas(self, baseline: Summary | None) -> tuple[Delta, ...]:
        figures: tuple[tuple[str, str, Spread, Spread | None], ...] = (
            ("attempt time", "s", self.now.attempt_seconds, baseline.attempt_seconds if baseline else None),
            ("turn time", "s", self.now.turn_seconds, baseline.turn_seconds if baseline else None),
            *(
                (
                    (
                        "time to first token",
                        "s",
                        self.now.first_seconds,
                        baseline.first_seconds if baseline else None,
                    ),
                )
                if self.now.first_seconds.count or (baseline is not None and baseline.first_seconds.count)
                else ()
            ),
            ("turns", "", self.now.turns, baseline.turns if baseline else None),
            (
                "agent input tokens",
                "tokens",
                self.now.agent_input_tokens,
                baseline.agent_input_tokens if baseline else None,
            ),
            (
                "agent output tokens",
                "tokens",
                self.now.agent_output_tokens,
                baseline.agent_output_tokens if baseline else None,
            ),
            ("user model tokens", "tokens", self.now.user_tokens, baseline.user_tokens if baseline else None),
            ("judge tokens", "tokens", self.now.judge_tokens, baseline.judge_tokens if baseline else None),
        )
        deltas: list[Delta] = []
        for figure, unit, now, before in figures:
            old = before.median if before is not None else None
            change = now.median - old if now.median is not None and old is not None else None
            deltas.append(Delta(figure=figure, unit=unit, now=now.median, baseline=old, change=change))
        return tuple(deltas)
