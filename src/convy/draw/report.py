"""The pages of runs, each one standalone HTML file (drawn.py): one run, with a window per scenario
listing its attempts (window.py); a run against its baseline; and every run of a results folder.

Every number and decision on them comes from the model — Summary, Comparison, GateDecision — and is
made into text here: the tiles, a scenario's status and its colour, the rows and their order. The
pages draw that as static HTML; their script only filters (see page.py, also for how agent text is
kept from acting)."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable
from pathlib import PurePath

import msgspec

from convy.compare.comparison import STATUSES, Comparison, Delta, NoBaseline, ScenarioChange
from convy.compare.gate import GateDecision
from convy.compare.parts import ScenarioSummary
from convy.compare.summary import Summary
from convy.draw.amount import Amount
from convy.draw.anchor import SIDE_BY_SIDE, Anchor
from convy.draw.attackgrid import AttackGrid
from convy.draw.drawn import PageTemplate
from convy.draw.judgegrid import JudgeGrid
from convy.draw.links import TraceLink
from convy.draw.page import (
    BarRow,
    Bars,
    Cell,
    Choice,
    Grid,
    Link,
    PageRow,
    Spreads,
    Tick,
    Tile,
    Tone,
    Trend,
    View,
)
from convy.draw.shown import Counted, Figure, GateShown, Percent, Reasons, ScenarioResult, ShownRun
from convy.draw.sidebyside import Differences
from convy.draw.transcript import PageText
from convy.draw.window import Windows
from convy.play.outcome import Outcome

CHANGE_TONES: dict[str, Tone] = {
    "regressed": "bad",
    "lower": "warn",
    "improved": "good",
    "higher": "plain",
    "changed": "note",
    "new": "note",
    "removed": "note",
    "not played": "plain",
    "rejudged": "note",
    "unchanged": "plain",
}
RUN_TONES: dict[str, Tone] = {
    "finished": "plain",
    "running": "note",
    "interrupted": "warn",
    "stopped": "warn",
}
CHANGES = STATUSES
RESULTS = (
    Choice(value="failing", label="failing"),
    Choice(value="flaky", label="flaky"),
    Choice(value="passing", label="passing"),
    Choice(value="unjudged", label="no verdict"),
)


class Report(msgspec.Struct, frozen=True):
    """One run's page: its tiles, charts, a table of its scenarios and, for each, a window with its
    attempts (transcript, the agent's steps, each claim's decision). `outcomes` are streamed once:
    each attempt is encoded as it passes and only its encoded form is kept."""

    summary: Summary
    outcomes: Iterable[Outcome]
    decision: GateDecision | None = None
    trace: TraceLink = TraceLink()
    """Each attempt's link to its trace in the team's tracing tool (trace-url)."""

    def html(self) -> str:
        s = self.summary
        run, judge = ShownRun(summary=s), JudgeGrid(s)
        return PageTemplate(("base", "window")).html(
            View(
                kind="report",
                title=f"{s.agent} · run {s.run}",
                facts=(*run.facts(), *judge.facts()),
                notices=run.notices(),
                headline=GateShown(decision=self.decision).headline() if self.decision else None,
                tiles=run.tiles(),
                charts=self.charts(),
                grids=(self.grid(), *AttackGrid.alone(s.attacks).grids(), run.parties(), *judge.grids()),
                windows=Windows(summary=s, outcomes=self.outcomes, trace=self.trace).windows(),
            )
        )

    def charts(self) -> tuple[Bars | Spreads, ...]:
        s = self.summary
        bars = Bars(
            title="Pass rate per scenario, with its 95% interval",
            series=("pass rate",),
            rows=tuple(
                BarRow(label=c.name, bars=(Percent(number=c.rate).mark(c.name),)) for c in s.scenarios
            ),
        )
        bands = (
            Figure(spread=s.turn_seconds, unit="s").band("every turn"),
            *(
                (Figure(spread=s.first_seconds, unit="s").band("first token"),)
                if s.first_seconds.count
                else ()
            ),
            Figure(spread=s.attempt_seconds, unit="s").band("every attempt"),
            *(Figure(spread=c.seconds, unit="s").band(f"attempt · {c.name}") for c in s.scenarios),
        )
        most = max((b.most for b in bands if b.most is not None), default=0.0)
        scale = most if most > 0 else 1.0
        spreads = Spreads(
            title="Seconds: min, median, p90 and max",
            scale=scale,
            ticks=tuple(
                Tick(value=scale * f, text=Amount(value=scale * f, unit="s").text()) for f in (0, 0.5, 1)
            ),
            rows=bands,
        )
        return (bars, spreads)

    def grid(self) -> Grid:
        return Grid(
            name="scenarios",
            title="Scenarios",
            columns=(
                "Scenario",
                "Result",
                "Pass rate (95% interval)",
                "Held",
                f"pass^{self.summary.repeat}",
                "Agent failures",
                "No verdict",
                "Median time",
                "Cost",
            ),
            rows=tuple(self.row(c) for c in self.summary.scenarios),
            statuses=RESULTS,
            empty="No scenario matches the filter.",
            numeric=(2, 3, 4, 5, 6, 7, 8),
        )

    def row(self, c: ScenarioSummary) -> PageRow:
        result = ScenarioResult(tally=c.tally)
        claims = " ".join(f.claim for f in c.failing)
        return PageRow(
            cells=(
                Cell(text=f"{c.name} (drafted from {c.source})" if c.source else c.name),
                Cell(text=result.label(), tone=result.tone(), badge=True),
                Cell(text=Percent(number=c.rate).text()),
                Cell(text=Counted(tally=c.tally).short()),
                Cell(text=Percent(number=c.pass_k).value()),
                Cell(text=f"{c.failed}", tone="bad" if c.failed else "plain"),
                Cell(text=f"{c.no_verdict}", tone="warn" if c.no_verdict else "plain"),
                Cell(text=Figure(spread=c.seconds, unit="s").median()),
                Cell(text=c.cost.text()),
            ),
            status=result.status(),
            search=f"{c.name} {c.file} {c.source} {result.label()} {claims}",
            anchor=Anchor(c.name).id(),
        )


class ComparisonPage(msgspec.Struct, frozen=True):
    """A run against its baseline: the gate's verdict and rule, each scenario's status with its
    p-value, the change of pass rate over the scenarios both runs share, the deltas, and why each
    scenario that changed did (sidebyside.py: `now` and `baseline` are the two runs' attempts, the
    baseline's as the comparison used them, each streamed once)."""

    comparison: Comparison
    decision: GateDecision
    now: Iterable[Outcome] = ()
    baseline: Iterable[Outcome] = ()
    trace: TraceLink = TraceLink()
    """An attempt's link to its trace (trace-url): `trace.of(outcome)` wherever an attempt is shown."""

    def html(self) -> str:
        c = self.comparison
        match c.baseline:
            case NoBaseline(why=why):
                title = f"{c.now.agent} · run {c.now.run} · no baseline"
                before = f"no baseline: {why}"
            case Summary(run=run):
                title = f"{c.now.agent} · run {c.now.run} against {run}"
                before = f"baseline {run}"
        changed = Differences(c, self.now, self.baseline, CHANGE_TONES, self.trace).html()
        shown = ShownRun(summary=c.now)
        return PageTemplate(("base", "window", "diff")).html(
            View(
                kind="comparison",
                title=title,
                facts=(f"now {c.now.run}", before, *shown.facts()[1:]),
                notices=shown.notices(),
                links=(Link(text="This run's report", href="report.html"),),
                headline=GateShown(decision=self.decision).headline(),
                tiles=self.tiles(),
                charts=(self.bars(),),
                grids=(self.scenarios(), *AttackGrid.of(c).grids(), self.deltas(), shown.parties()),
                sections=(changed,) if changed else (),
            )
        )

    def tiles(self) -> tuple[Tile, ...]:
        c = self.comparison
        now = Percent(number=c.now.rate)
        share = Percent(number=c.now.no_verdict_share).value()
        tiles = [
            Tile(
                label="Pass rate now",
                value=now.value(),
                note=f"{now.interval()} · {Counted(tally=c.now.tally).text()}",
            )
        ]
        match c.baseline:
            case NoBaseline(why=why):
                tiles.append(Tile(label="Baseline", value="none", note=why, tone="note"))
            case Summary() as base:
                then = Percent(number=base.rate)
                tiles.append(
                    Tile(
                        label="Pass rate in the baseline",
                        value=then.value(),
                        note=f"{then.interval()} · {Counted(tally=base.tally).text()}",
                    )
                )
                tiles.append(self.change())
        tiles.append(
            Tile(
                label="Without verdict now",
                value=f"{c.now.no_verdict_attempts}",
                note=f"{share} of attempts · {Reasons(reasons=c.now.no_verdict).text()}",
                tone="warn" if c.now.no_verdict_attempts else "plain",
            )
        )
        return tuple(tiles)

    def change(self) -> Tile:
        """The change of pass rate over the scenarios common and unchanged in both runs."""
        c = self.comparison
        tally = f"{Counted(tally=c.common_baseline).short()} → {Counted(tally=c.common_now).short()} held"
        tests = f"drop {c.p_drop.text()} · gain {c.p_gain.text()}"
        if c.drop is None:
            return Tile(label="Change on common scenarios", value="unknown", note=tally)
        alpha = self.decision.alpha
        value = "no change"
        tone: Tone = "plain"
        if c.drop > 0:
            value, tone = f"−{c.drop * 100:.1f} points", "bad" if c.p_drop.below(alpha) else "warn"
        elif c.drop < 0:
            value, tone = f"+{-c.drop * 100:.1f} points", "good" if c.p_gain.below(alpha) else "plain"
        note = f"{tally} · {tests} (significant below {alpha:g})"
        return Tile(label="Change on common scenarios", value=value, note=note, tone=tone)

    def bars(self) -> Bars:
        return Bars(
            title="Pass rate per scenario: now and in the baseline",
            series=("now", "baseline"),
            rows=tuple(
                BarRow(
                    label=s.name,
                    bars=(
                        Percent(number=s.now_rate).mark("now"),
                        Percent(number=s.baseline_rate).mark("baseline"),
                    ),
                )
                for s in self.comparison.ordered()
            ),
        )

    def scenarios(self) -> Grid:
        return Grid(
            name="scenarios",
            title="Scenarios",
            columns=("Scenario", "Status", "Now", "Baseline", "p", "Failing claims"),
            rows=tuple(self.row(s) for s in self.comparison.ordered()),
            statuses=tuple(Choice(value=status, label=status) for status in CHANGES),
            empty="No scenario matches the filter.",
            numeric=(2, 3, 4),
        )

    def row(self, s: ScenarioChange) -> PageRow:
        failing = "\n".join(
            f"{PageText(text=f.claim, limit=300).whole()} (failed {f.failed} of {f.judged})"
            for f in s.failing
        )
        return PageRow(
            cells=(
                Cell(text=s.name),
                Cell(text=s.status, tone=CHANGE_TONES[s.status], badge=True),
                Cell(text=f"{Counted(tally=s.now).short()} · {Percent(number=s.now_rate).text()}"),
                Cell(text=f"{Counted(tally=s.baseline).short()} · {Percent(number=s.baseline_rate).text()}"),
                Cell(text=s.p.text()),
                Cell(text=failing),
            ),
            status=s.status,
            search=f"{s.name} {s.file} {s.status} {failing}",
            anchor=Anchor(s.name).diff() if s.status in SIDE_BY_SIDE else "",
        )

    def deltas(self) -> Grid:
        return Grid(
            name="deltas",
            title="Times and tokens: medians now and in the baseline",
            columns=("Figure", "Now", "Baseline", "Change"),
            rows=tuple(self.delta(d) for d in self.comparison.deltas),
            filtered=False,
            numeric=(1, 2, 3),
        )

    def delta(self, d: Delta) -> PageRow:
        return PageRow(
            cells=(
                Cell(text=d.figure),
                Cell(text=Amount(value=d.now, unit=d.unit).text()),
                Cell(text=Amount(value=d.baseline, unit=d.unit).text()),
                Cell(text=Amount(value=d.change, unit=d.unit).signed()),
            )
        )


class Index(msgspec.Struct, frozen=True):
    """Every run of a results folder (results/<agent>/<run>/), newest first, each linking to its
    report.html, with each agent's pass rate over its runs as a trend."""

    summaries: tuple[Summary, ...]

    def html(self) -> str:
        runs = sorted(self.summaries, key=lambda s: (s.started, s.run))
        agents = sorted({s.agent for s in runs})
        trends = tuple(
            Trend(
                title=f"{agent}: pass rate per run",
                points=tuple(Percent(number=s.rate).mark(s.run) for s in runs if s.agent == agent),
            )
            for agent in agents
        )
        grid = Grid(
            name="runs",
            title="Runs",
            columns=(
                "Agent",
                "Run",
                "Started",
                "Status",
                "Pass rate (95% interval)",
                "Attempts",
                "Without verdict",
                "Commit",
            ),
            rows=tuple(self.row(s) for s in reversed(runs)),
            statuses=tuple(Choice(value=status, label=status) for status in RUN_TONES),
            empty="No run matches the filter." if runs else "No run yet: `convy run` makes one.",
            numeric=(4, 5, 6),
        )
        plural = "run" if len(runs) == 1 else "runs"
        return PageTemplate(("base",)).html(
            View(
                kind="index",
                title="convy runs",
                facts=(f"{len(runs)} {plural}", f"{len(agents)} agent" + ("" if len(agents) == 1 else "s")),
                charts=trends,
                grids=(grid,),
            )
        )

    def row(self, s: Summary) -> PageRow:
        folder = PurePath(s.folder)
        link = "/".join(urllib.parse.quote(part, safe="") for part in (folder.parent.name, folder.name))
        commit = " ".join(part for part in (s.ref, s.sha[:12]) if part)
        return PageRow(
            cells=(
                Cell(text=s.agent),
                Cell(text=s.run, link=f"{link}/report.html"),
                Cell(text=s.started),
                Cell(text=s.status + (" (torn)" if s.torn else ""), tone=RUN_TONES[s.status], badge=True),
                Cell(text=Percent(number=s.rate).text()),
                Cell(text=f"{s.attempts} of {s.expected}"),
                Cell(
                    text=Percent(number=s.no_verdict_share).value(), tone="warn" if s.no_verdict else "plain"
                ),
                Cell(text=commit),
            ),
            status=s.status,
            search=f"{s.agent} {s.run} {s.started} {s.status} {commit}",
        )
