"""The comment's open tables, narrow enough for a phone: GitHub draws a markdown table as wide as
its longest cells, never wrapping them, so each has at most 3 columns of short cells, and what would
not fit (a failure's reasons, a long build, a party's message) is said on lines under it.

The headline figures (now and in the baseline) and whose fault the attempts that did not hold were
(each party's commonest message under the table) are drawn from figures.py, so they show the same
facts as the console's wider tables."""

from __future__ import annotations

import msgspec

from convy.compare.comparison import NoBaseline
from convy.compare.statistics import Rate
from convy.compare.summary import Summary
from convy.draw.blocks import GroupedTable
from convy.draw.figures import MESSAGE, PARTIES, REASONS, Figures
from convy.draw.notes import RunNotes
from convy.draw.shown import Attributed, Percent

STYLE = "github"
BUILD = 16
"""Characters of an agent's build in a cell; a longer one is written in full under the table."""
LABELS = ("pass rate", "95% interval", "pass^k", "judged", "no verdict", "agent failed", "cost")
"""The headline figures' names, short enough for a phone's column."""


class Keyed(msgspec.Struct, frozen=True):
    """The headline figures: a column now and, with a baseline, one for the baseline (the change
    is in the sentence above the table)."""

    figures: Figures

    def column(self, summary: Summary) -> tuple[str, ...]:
        match summary.rate:
            case Rate(low=low, high=high):
                interval = f"{low * 100:.1f}–{high * 100:.1f}%"
            case _:
                interval = "unknown"
        return (
            Percent(number=summary.rate).value(),
            interval,
            f"{summary.pass_k.text()} (k = {summary.repeat})",
            f"{summary.tally.judged - summary.failed_attempts} of {summary.attempts}",
            f"{summary.no_verdict_attempts} ({summary.no_verdict_share.text()})",
            f"{summary.failed_attempts}",
            summary.cost.text(),
        )

    def runs(self) -> tuple[tuple[str, Summary], ...]:
        comparison = self.figures.comparison
        match comparison.baseline:
            case NoBaseline():
                return (("now", comparison.now),)
            case Summary() as baseline:
                return (("now", comparison.now), ("baseline", baseline))

    def text(self) -> str:
        runs = self.runs()
        columns = [self.column(summary) for _, summary in runs]
        rows = [(label, *(column[index] for column in columns)) for index, label in enumerate(LABELS)]
        builds = [summary.agent_version for _, summary in runs]
        if any(builds):
            rows.append(("agent build", *(self.build(build, BUILD) for build in builds)))
        table = GroupedTable(
            headers=("", *(name for name, _ in runs)),
            groups=tuple((row,) for row in rows),
            noun="figures",
            style=STYLE,
        ).text()
        lines = [self.failures(name, summary) for name, summary in runs if summary.failed]
        once = RunNotes(self.figures.comparison, self.figures.cells).once()
        if once:
            lines.append(f"- {once}")
        if any(len(build) > BUILD for build in builds):
            lines += [
                f"- agent build {name}: {self.build(build, 60)}"
                for (name, _), build in zip(runs, builds, strict=True)
            ]
        return "\n\n".join((table, "\n".join(lines))) if lines else table

    def build(self, build: str, limit: int) -> str:
        return self.figures.cells.cell(build, limit) if build else "unknown"

    def failures(self, name: str, summary: Summary) -> str:
        """Why the agent failed, with how often: `- agent failures now: http_500 ×2, timeout ×1`."""
        reasons = summary.failed
        shown = ", ".join(f"{self.figures.cells.cell(r.reason, 40)} ×{r.count}" for r in reasons[:REASONS])
        return f"- agent failures {name}: {shown}{', …' if len(reasons) > REASONS else ''}"


class Causes(msgspec.Struct, frozen=True):
    """Whose fault the attempts that did not hold were (the agent, the user model, the judge, busy
    services): how many, the commonest reason, and under the table each party's commonest message —
    for failed claims, whose reason it is: the judge's (`judge:`) or a deterministic check's
    (`check:`)."""

    figures: Figures

    def text(self) -> str:
        parties = self.figures.comparison.now.parties
        table = GroupedTable(
            headers=("whose", "attempts", "commonest reason"),
            groups=tuple(
                (
                    (
                        PARTIES.get(p.party, p.party),
                        f"{p.count}",
                        self.figures.cells.cell(self.figures.reason(p), 40),
                    ),
                )
                for p in parties
            ),
            noun="parties",
            style=STYLE,
        ).text()
        lines = [
            f"- {PARTIES.get(p.party, p.party)} — "
            f"{self.figures.cells.cell(Attributed(party=p).text(), MESSAGE)}"
            for p in parties
            if p.message
        ]
        return "\n\n".join((table, "\n".join(lines))) if lines else table
