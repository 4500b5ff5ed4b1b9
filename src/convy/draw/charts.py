"""A page's charts (bars, spreads, a trend) drawn as static HTML and SVG.

A chart's labels and values are HTML text, or SVG text in an SVG without a viewBox, so they are never
scaled down with the chart: on a phone they keep their size (12 px) and the chart narrows. Marks are
placed in percent of the plot's width, so nothing of a chart is wider than the screen. The numbers
are placed only: every text shown was formatted by the model's side (shown.py)."""

from __future__ import annotations

import msgspec

from convy.draw.markup import Html, Tag
from convy.draw.page import Band, Bars, Chart, Interval, Spreads, Trend

TRACK = 14
"""Pixels of one bar's track."""
BAND = 18
"""Pixels of one spread's track."""
TOP, HEIGHT, BOTTOM = 10, 150, 30
"""Pixels of a trend: space above the plot, the plot, the labels under it."""


class Place(msgspec.Struct, frozen=True):
    """A share of the plot's width, 0 to 1 (clamped), as an SVG position in percent."""

    share: float

    def x(self) -> str:
        return f"{min(1.0, max(0.0, self.share)) * 100:.2f}%"


class ChartHtml(msgspec.Struct, frozen=True):
    """One chart as a `<figure>`: its caption, its plot and, with two series, a legend."""

    chart: Chart

    def html(self) -> Html:
        c = self.chart
        parts: list[str | Html] = [Tag("figcaption").of(c.title)]
        match c:
            case Bars():
                parts.append(self.bars(c))
                if len(c.series) > 1:
                    parts.append(
                        Tag("div", {"class": "legend"}).of(
                            *(
                                Tag("span", {"class": f"series-{j}"}).of(name)
                                for j, name in enumerate(c.series)
                            )
                        )
                    )
            case Spreads():
                parts.append(self.spreads(c))
            case Trend():
                parts.append(self.trend(c))
        kind = "bars" if isinstance(c, Bars) else "spreads" if isinstance(c, Spreads) else "trend"
        return Tag("figure", {"class": f"chart chart-{kind}"}).of(*parts)

    def axis(self, ticks: list[tuple[float, str]]) -> Html:
        """The row under a plot with its ticks' labels."""
        texts = []
        for index, (share, text) in enumerate(ticks):
            anchor = "start" if index == 0 else "end" if index == len(ticks) - 1 else "middle"
            texts.append(Tag("text", {"x": Place(share).x(), "y": 12, "text-anchor": anchor}).of(text))
        return Tag("div", {"class": "row ticks"}).of(
            Tag("span", {"class": "spacer"}).of(),
            Tag("svg", {"class": "ticks", "width": "100%", "height": 16, "aria-hidden": "true"}).of(*texts),
            Tag("span", {"class": "spacer"}).of(),
        )

    def grid(self, shares: list[float], height: int) -> list[str | Html]:
        return [
            Tag("line", {"class": "axis", "x1": Place(s).x(), "x2": Place(s).x(), "y1": 0, "y2": height}).of()
            for s in shares
        ]

    def bars(self, chart: Bars) -> Html:
        rows = []
        for row in chart.rows:
            tracks = [self.bar(row.label, chart.series[j], j, bar) for j, bar in enumerate(row.bars)]
            values = [
                Tag("span", {"class": f"value series-{j}"}).of(bar.text) for j, bar in enumerate(row.bars)
            ]
            rows.append(
                Tag("div", {"class": "row"}).of(
                    Tag("span", {"class": "label", "title": row.label}).of(row.label),
                    Tag("span", {"class": "marks"}).of(*tracks),
                    Tag("span", {"class": "values"}).of(*values),
                )
            )
        ticks = [(share, f"{round(share * 100)}%") for share in (0, 0.5, 1)]
        return Tag("div", {"class": "plot"}).of(*rows, self.axis(ticks))

    def bar(self, label: str, series: str, j: int, bar: Interval) -> Html:
        said = f"{label} · {series}: {bar.text}"
        marks: list[str | Html] = [Tag("title").of(said), *self.grid([0.25, 0.5, 0.75], TRACK)]
        if bar.value is not None:
            marks.append(
                Tag(
                    "rect",
                    {
                        "class": f"bar series-{j}",
                        "x": 0,
                        "y": 1,
                        "width": Place(max(bar.value, 0.004)).x(),
                        "height": TRACK - 2,
                        "rx": 2,
                    },
                ).of()
            )
            if bar.low is not None and bar.high is not None:
                low, high, middle = Place(bar.low).x(), Place(bar.high).x(), TRACK // 2
                marks.append(
                    Tag("line", {"class": "whisker", "x1": low, "x2": high, "y1": middle, "y2": middle}).of()
                )
                for x in (low, high):
                    marks.append(
                        Tag("line", {"class": "whisker", "x1": x, "x2": x, "y1": 3, "y2": TRACK - 3}).of()
                    )
        return Tag(
            "svg", {"class": "track", "width": "100%", "height": TRACK, "role": "img", "aria-label": said}
        ).of(*marks)

    def spreads(self, chart: Spreads) -> Html:
        scale = chart.scale or 1.0
        shares = [tick.value / scale for tick in chart.ticks]
        rows = [
            Tag("div", {"class": "row"}).of(
                Tag("span", {"class": "label", "title": band.label}).of(band.label),
                Tag("span", {"class": "marks"}).of(self.band(band, scale, shares)),
                Tag("span", {"class": "values"}).of(Tag("span", {"class": "value"}).of(band.value)),
            )
            for band in chart.rows
        ]
        return Tag("div", {"class": "plot"}).of(
            *rows, self.axis([(share, tick.text) for share, tick in zip(shares, chart.ticks, strict=True)])
        )

    def band(self, band: Band, scale: float, shares: list[float]) -> Html:
        said = f"{band.label}: {band.text}"
        middle = BAND // 2
        marks: list[str | Html] = [Tag("title").of(said), *self.grid(shares, BAND)]
        if band.median is not None and band.least is not None and band.most is not None:
            at = [
                Place(value / scale).x()
                for value in (band.least, band.most, band.median, band.p90 or band.median)
            ]
            marks.append(
                Tag("line", {"class": "range", "x1": at[0], "x2": at[1], "y1": middle, "y2": middle}).of()
            )
            marks.append(
                Tag("line", {"class": "upper", "x1": at[2], "x2": at[3], "y1": middle, "y2": middle}).of()
            )
            marks.append(Tag("circle", {"class": "median", "cx": at[2], "cy": middle, "r": 4.5}).of())
        return Tag(
            "svg", {"class": "track", "width": "100%", "height": BAND, "role": "img", "aria-label": said}
        ).of(*marks)

    def trend(self, chart: Trend) -> Html:
        points = chart.points
        count = len(points)

        def share(i: int) -> float:
            return 0.5 if count == 1 else 0.03 + 0.94 * i / (count - 1)

        def y(value: float) -> float:
            return TOP + (1 - value) * HEIGHT

        parts: list[str | Html] = []
        for tick in (0.0, 0.5, 1.0):
            parts.append(
                Tag("line", {"class": "axis", "x1": 0, "x2": "100%", "y1": y(tick), "y2": y(tick)}).of()
            )
            parts.append(Tag("text", {"x": 0, "y": y(tick) - 3}).of(f"{round(tick * 100)}%"))
        runs: list[list[tuple[int, Interval]]] = [[]]
        for i, p in enumerate(points):
            if p.value is None:
                runs.append([])
            else:
                runs[-1].append((i, p))
        shapes: list[str | Html] = []
        for run in filter(None, runs):
            upper = [f"{share(i) * 1000:.1f},{(1 - (p.high or 0)) * HEIGHT:.1f}" for i, p in run]
            lower = [f"{share(i) * 1000:.1f},{(1 - (p.low or 0)) * HEIGHT:.1f}" for i, p in reversed(run)]
            line = [f"{share(i) * 1000:.1f},{(1 - (p.value or 0)) * HEIGHT:.1f}" for i, p in run]
            shapes.append(Tag("polygon", {"class": "band", "points": " ".join(upper + lower)}).of())
            shapes.append(
                Tag(
                    "polyline",
                    {"class": "line", "points": " ".join(line), "vector-effect": "non-scaling-stroke"},
                ).of()
            )
        parts.append(
            Tag(
                "svg",
                {
                    "x": 0,
                    "y": TOP,
                    "width": "100%",
                    "height": HEIGHT,
                    "viewBox": f"0 0 1000 {HEIGHT}",
                    "preserveAspectRatio": "none",
                },
            ).of(*shapes)
        )
        labelled = range(count) if count <= 3 else (0, count - 1)
        for i, p in enumerate(points):
            x = Place(share(i)).x()
            said = f"{p.label}: {p.text}"
            if p.value is not None and p.low is not None and p.high is not None:
                parts.append(
                    Tag("line", {"class": "interval", "x1": x, "x2": x, "y1": y(p.low), "y2": y(p.high)}).of()
                )
                parts.append(
                    Tag("circle", {"class": "point", "cx": x, "cy": y(p.value), "r": 4}).of(
                        Tag("title").of(said)
                    )
                )
            if i in labelled:
                anchor = (
                    "middle" if count == 1 else "start" if i == 0 else "end" if i == count - 1 else "middle"
                )
                parts.append(
                    Tag("text", {"x": x, "y": TOP + HEIGHT + 18, "text-anchor": anchor}).of(
                        Tag("title").of(said), p.label
                    )
                )
        return Tag(
            "svg",
            {
                "class": "trend",
                "width": "100%",
                "height": TOP + HEIGHT + BOTTOM,
                "role": "img",
                "aria-label": chart.title,
            },
        ).of(*parts)
