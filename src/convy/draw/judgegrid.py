"""The judge against the labels on a run's page (see docs/labels.md): its line, the pass rate corrected
for the judge (or why it is not shown), and a table of the disagreements — the judge's decision,
the person's, the judge's reason, the claim and the scenario."""

from __future__ import annotations

import msgspec

from convy.compare.summary import Summary
from convy.draw.judgeline import JudgeLine
from convy.draw.page import Cell, Grid, PageRow


class JudgeGrid(msgspec.Struct, frozen=True):
    """A run's judge as its page shows it."""

    summary: Summary

    def facts(self) -> tuple[str, ...]:
        s = self.summary
        line = JudgeLine(s.calibration, s.corrected)
        if not s.calibration.measured:
            return (line.text(),)
        rate = line.rate() or f"Pass rate corrected for the judge: not shown ({s.corrected.why})"
        return (line.text(), rate)

    def grids(self) -> tuple[Grid, ...]:
        judge = self.summary.calibration
        if not judge.measured:
            return ()
        rows = tuple(
            PageRow(
                cells=(
                    Cell(text=self.said(each.judge), tone="bad" if each.judge else "warn"),
                    Cell(text=self.said(each.person)),
                    Cell(text=each.reason or "—"),
                    Cell(text=each.claim),
                    Cell(text=each.scenario + (" (chosen: failing)" if each.chosen == "failing" else "")),
                ),
                search=f"{each.scenario} {each.claim} {each.reason} {each.where}",
            )
            for each in judge.disagreements
        )
        return (
            Grid(
                name="disagreements",
                title="Where the judge and the labels disagree",
                columns=("Judge", "Person", "The judge's reason", "Claim", "Scenario"),
                rows=rows,
                empty="The judge agreed with every labelled decision.",
            ),
        )

    def said(self, passed: bool) -> str:
        return "holds" if passed else "does not hold"
