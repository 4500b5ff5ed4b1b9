"""What the benchmark prints: Row, one workload's figures, its checks (PASS / MISS) and whether it
did all its work (DONE / FAIL); Table, the rows as one table and then each row's checks and notes;
Targets, the targets checked on the rows that measure them."""

from __future__ import annotations

from typing import Any


class Row:
    """One line of the table; a figure not measured for a workload is None (shown as —).
    `checks` are the targets (how fast, how much: PASS / MISS, never the exit code); `complete` is
    whether the workload did all its work (DONE / FAIL: any FAIL makes the benchmark exit 1)."""

    def __init__(self, number: str, name: str, **figures: Any) -> None:
        self.number = number
        self.name = name
        self.figures = figures
        self.notes: list[str] = []
        self.checks: list[tuple[str, bool | None]] = []
        self.complete: list[tuple[str, bool]] = []

    def check(self, what: str, met: bool | None) -> None:
        self.checks.append((what, met))

    def done(self, what: str, met: bool) -> None:
        self.complete.append((what, met))


class Table:
    """The rows, printed as one table, then each row's checks and notes."""

    COLUMNS = (
        ("#", None),
        ("workload", None),
        ("wall s", "wall"),
        ("ideal s", "ideal"),
        ("wall/ideal", "ratio"),
        ("span/ideal", "span_ratio"),
        ("CPU s", "cpu"),
        ("CPU ms/req", "cpu_ms"),
        ("minus start-up", "cpu_ms_net"),
        ("httpx ms/req", "httpx_floor"),
        ("÷ httpx", "vs_httpx"),
        ("start+end s", "fixed"),
        ("peak RSS MB", "rss"),
        ("requests (agent+model)", "requests"),
        ("peak in flight agent/model", "peak"),
    )

    def __init__(self, rows: list[Row]) -> None:
        self._rows = rows

    def cell(self, value: Any) -> str:
        if value is None:
            return "—"
        if isinstance(value, float):
            return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
        return str(value)

    def text(self) -> str:
        lines = [[title for title, _ in self.COLUMNS]]
        for row in self._rows:
            cells = [row.number, row.name]
            cells += [self.cell(row.figures.get(key)) for _, key in self.COLUMNS[2:] if key]
            lines.append(cells)
        widths = [max(len(line[i]) for line in lines) for i in range(len(self.COLUMNS))]
        rendered = [" | ".join(cell.ljust(width) for cell, width in zip(line, widths)) for line in lines]
        rendered.insert(1, "-+-".join("-" * width for width in widths))
        out = "\n".join(rendered) + "\n"
        for row in self._rows:
            out += f"\n{row.number}. {row.name}\n"
            for what, done in row.complete:
                out += f"   [{'DONE' if done else 'FAIL'}] {what}\n"
            for what, met in row.checks:
                mark = "n/a " if met is None else ("PASS" if met else "MISS")
                out += f"   [{mark}] {what}\n"
            for note in row.notes:
                out += f"   - {note}\n"
        return out


class Targets:
    """The targets, checked on the rows that measure them (how fast and how much: never the exit
    code, since a shared machine's load moves every figure)."""

    def apply(self, rows: list[Row]) -> None:
        for row in rows:
            f = row.figures
            if row.number in ("1", "6") and f.get("ratio") is not None:
                row.check("wall/ideal ≤ 1.10 (process wall, start-up included)", f["ratio"] <= 1.10)
                if f.get("span_ratio") is not None:
                    row.check("span/ideal ≤ 1.10 (the play alone, at the servers)", f["span_ratio"] <= 1.10)
                row.check("peak RSS ≤ 80 MB", f["rss"] <= 80)
            if row.number == "6" and f.get("fixed") is not None:
                row.check("start-up + shut-down ≤ 0.18 s", f["fixed"] <= 0.18)
            if row.number == "2" and f.get("cpu_ms_net") is not None:
                row.check(
                    "CPU ≤ 0.8 ms per HTTP request (whole process minus start-up)", f["cpu_ms_net"] <= 0.8
                )
                row.check("peak RSS ≤ 80 MB", f["rss"] <= 80)
            if row.number == "2s" and f.get("handshakes") is not None:
                agent, models = f["handshakes"]
                at_once = int(row.name.split(" C=")[1].split(",")[0])
                row.check(
                    f"no TLS handshake where a kept connection could serve: agent {agent} ≤ C = {at_once}, "
                    f"models {models} ≤ 2C = {2 * at_once}",
                    agent <= at_once and models <= 2 * at_once,
                )
            if row.number == "7" and f.get("vs_floor") is not None:
                row.check(f"CPU per request ≤ 8 × the floor's ({f['vs_floor']:.1f} ×)", f["vs_floor"] <= 8)
                row.check(f"peak RSS of the A=200 run ≤ 45 MB ({f['rss']:.1f})", f["rss"] <= 45)
                row.check(
                    "wall/ideal at 100 ms within 0.05 of the floor's "
                    f"({f['ratio']:.3f} vs {f['floor_ratio']:.3f})",
                    f["ratio"] - f["floor_ratio"] <= 0.05,
                )
                row.check(
                    "wall/ideal at 100 ms within 0.05 of the floor's that also sends the first agent "
                    f"request alone ({f['ratio']:.3f} vs {f['held_ratio']:.3f})",
                    f["ratio"] - f["held_ratio"] <= 0.05,
                )
            if row.number == "4" and f.get("wall") is not None:
                row.check("under 2 s (child process wall)", f["wall"] < 2.0)
                row.check("peak RSS under 250 MB", f["rss"] < 250)
