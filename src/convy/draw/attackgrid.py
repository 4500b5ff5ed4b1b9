"""The attacks of a run by category as a page's table (the run's page, and against its baseline on
the comparison's): only drawing, every figure is compare/attacks.py's."""

from __future__ import annotations

import msgspec

from convy.compare.attacks import AttackChange, Attacked
from convy.compare.comparison import Comparison, NoBaseline
from convy.draw.page import Cell, Grid, PageRow
from convy.draw.shown import Percent


class AttackGrid(msgspec.Struct, frozen=True):
    """The attacks by category as a page's table: title, OWASP id, how many succeeded of those
    played with the Wilson interval, and the baseline's figure when the page compares. No attacks:
    no table."""

    lines: tuple[AttackChange, ...]
    compared: bool = False

    @classmethod
    def alone(cls, attacks: tuple[Attacked, ...]) -> AttackGrid:
        """A run's attacks on its own page, with no baseline."""
        return cls(tuple(AttackChange(now=a, baseline=Attacked(category=a.category)) for a in attacks))

    @classmethod
    def of(cls, comparison: Comparison) -> AttackGrid:
        """A run's attacks against its baseline's."""
        return cls(comparison.attacks(), compared=not isinstance(comparison.baseline, NoBaseline))

    def grids(self) -> tuple[Grid, ...]:
        if not self.lines:
            return ()
        columns = ("Category", "OWASP", "Succeeded of played", "Share succeeded (95% interval)")
        return (
            Grid(
                name="attacks",
                title="Attacks: attempts where the agent gave way, by category",
                columns=(*columns, "Baseline") if self.compared else columns,
                rows=tuple(self.row(line) for line in self.lines),
                filtered=False,
                numeric=(2, 3),
            ),
        )

    def row(self, line: AttackChange) -> PageRow:
        now = line.now
        cells = (
            Cell(text=f"{now.title} ({now.category})" if now.title else now.category),
            Cell(text=now.owasp or "—"),
            Cell(text=f"{now.succeeded} of {now.played}", tone="bad" if now.succeeded else "plain"),
            Cell(text=Percent(number=now.rate).text()),
        )
        return PageRow(
            cells=(*cells, Cell(text=line.baseline.text())) if self.compared else cells,
            search=now.category,
        )
