"""A page's view written as one standalone HTML file: its head (the Content-Security-Policy by hash,
the shared style and script of pages/ inlined, the icon as a data: address) and its main part (the
view as static HTML: header, headline, tiles, charts, tables, each scenario's window).

The page is whole without its script: tables are HTML (on a narrow screen each row a card, every
cell labelled by its column in `data-label`), each scenario's window a `<details>` that `:target`
opens. The script only adds the filters and opens the window the address names where a browser
cannot by CSS. See page.py for how agent text is kept from acting."""

from __future__ import annotations

import base64
import hashlib
import re
import urllib.parse
from importlib import resources

import msgspec

from convy.draw.charts import ChartHtml
from convy.draw.markup import FactList, Html, Pill, Tag, Value
from convy.draw.page import Cell, Grid, PageRow, Tile, View
from convy.draw.window import TileHtml, WindowHtml

SCHEMED = re.compile(r"[a-z][a-z0-9+.-]*:", re.IGNORECASE)
"""An address with a scheme: no link of a page has one (every link is to a place in the page or in
the results folder), so such an address is shown as text."""


class InlineSource(msgspec.Struct, frozen=True):
    """The text of an inline script or style, with the hash a Content-Security-Policy allows it by."""

    text: str

    def __post_init__(self) -> None:
        if "</" in self.text or "<!--" in self.text:
            raise ValueError("an inline script or style must not contain '</' or '<!--'")

    def allowed(self) -> str:
        digest = base64.b64encode(hashlib.sha256(self.text.encode()).digest()).decode()
        return f"'sha256-{digest}'"


class PageTemplate(msgspec.Struct, frozen=True):
    """A page made of the shared parts in pages/ (the styles `base`, and `window` for the scenarios'
    windows; the script base.js) and the view drawn as static HTML."""

    parts: tuple[str, ...] = ("base",)

    def html(self, view: View) -> str:
        folder = resources.files("convy.draw") / "pages"
        style = InlineSource(
            "\n".join((folder / f"{part}.css").read_text(encoding="utf-8") for part in self.parts)
        )
        script = InlineSource((folder / "base.js").read_text(encoding="utf-8"))
        icon = urllib.parse.quote((folder / "icon.svg").read_text(encoding="utf-8").strip(), safe="")
        policy = (
            f"default-src 'none'; script-src {script.allowed()}; style-src {style.allowed()}; "
            "img-src data:; base-uri 'none'; form-action 'none'"
        )
        return (
            "<!doctype html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
            '<meta name="referrer" content="no-referrer">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<meta name="color-scheme" content="light dark">\n'
            f"{Tag('title').of(view.title + ' · convy')}\n"
            f'<link rel="icon" href="data:image/svg+xml,{icon}">\n'
            f"<style>{style.text}</style>\n"
            "</head>\n<body>\n"
            f"{MainPart(view).html()}\n"
            f"<script>{script.text}</script>\n"
            "</body>\n</html>\n"
        )


class MainPart(msgspec.Struct, frozen=True):
    """The view as the page's `<main>`."""

    view: View

    def html(self) -> Html:
        v = self.view
        parts: list[str | Html] = [self.header()]
        parts.extend(Tag("p", {"class": "notice"}).of(notice) for notice in v.notices)
        if v.headline:
            h = v.headline
            parts.append(
                Tag("section", {"class": f"headline tone-{h.tone}", "aria-label": "gate"}).of(
                    Tag("div", {"class": "verdict"}).of(h.verdict),
                    Tag("div", {"class": "rule"}).of(f"rule: {h.rule}"),
                    Tag("div", {"class": "explanation"}).of(h.explanation),
                )
            )
        if v.tiles:
            parts.append(Tag("section", {"class": "tiles"}).of(*(self.tile(t) for t in v.tiles)))
        if v.charts:
            parts.append(Tag("section", {"class": "charts"}).of(*(ChartHtml(c).html() for c in v.charts)))
        first = next((g.name for g in v.grids if g.filtered), "")
        parts.extend(GridHtml(grid=g, first=g.name == first).html() for g in v.grids)
        parts.extend(v.sections)
        if v.windows:
            parts.append(
                Tag("section", {"class": "windows", "aria-label": "each scenario"}).of(
                    Tag("h2").of("Each scenario"),
                    Tag("p", {"class": "quiet"}).of(
                        "Each scenario's attempts with their transcripts and decisions; a scenario's "
                        "name in the table opens it."
                    ),
                    *(WindowHtml(w).html() for w in v.windows),
                )
            )
        return Tag("main", {"id": "page"}).of(*parts)

    def header(self) -> Html:
        v = self.view
        parts: list[str | Html] = [Tag("h1").of(v.title)]
        if v.facts:
            parts.append(FactList(facts=v.facts).html())
        links = [link for link in v.links if not SCHEMED.match(link.href)]
        if links:
            parts.append(
                Tag("nav", {"class": "links"}).of(
                    *(Tag("a", {"href": link.href}).of(link.text) for link in links)
                )
            )
        return Tag("header", {"class": "top"}).of(*parts)

    def tile(self, tile: Tile) -> Html:
        return TileHtml(box="tile", label="label", value="value", note="note").html(tile)


class GridHtml(msgspec.Struct, frozen=True, kw_only=True):
    """A table with its title and, where it has them, its filters (hidden until the script wires
    them); `first` is the table whose filter the address keeps. On a narrow screen each row is a card
    whose cells are labelled by their columns."""

    grid: Grid
    first: bool = False

    def html(self) -> Html:
        g = self.grid
        bar: list[str | Html] = [Tag("h2").of(g.title)]
        if g.filtered:
            bar.append(
                Tag(
                    "input",
                    {
                        "type": "search",
                        "placeholder": f"Filter {g.title.lower()}…",
                        "aria-label": f"filter {g.title.lower()}",
                        "hidden": True,
                    },
                ).of()
            )
            if g.statuses:
                options = [Tag("option", {"value": ""}).of("every status")]
                options.extend(Tag("option", {"value": c.value}).of(c.label) for c in g.statuses)
                bar.append(Tag("select", {"aria-label": "status", "hidden": True}).of(*options))
        head = Tag("thead").of(
            Tag("tr").of(
                *(
                    Tag("th", {"scope": "col", "class": "numeric" if i in g.numeric else None}).of(name)
                    for i, name in enumerate(g.columns)
                )
            )
        )
        empty = Tag("tr", {"class": "empty", "hidden": bool(g.rows)}).of(
            Tag("td", {"colspan": len(g.columns)}).of(g.empty)
        )
        body = Tag("tbody").of(*(self.row(r) for r in g.rows), empty)
        table = Tag("table", {"class": "cards"}).of(head, body)
        return Tag(
            "section",
            {"class": "grid", "id": g.name, "data-filtered": g.filtered, "data-first": self.first},
        ).of(Tag("div", {"class": "toolbar"}).of(*bar), Tag("div", {"class": "scroll"}).of(table))

    def row(self, r: PageRow) -> Html:
        cells = [self.cell(r, i, c) for i, c in enumerate(r.cells)]
        attributes: dict[str, Value] = {
            "data-status": r.status,
            "data-search": r.search.lower(),
            "data-anchor": r.anchor or None,
        }
        return Tag("tr", attributes).of(*cells)

    def cell(self, r: PageRow, index: int, c: Cell) -> Html:
        numeric = index in self.grid.numeric
        label = self.grid.columns[index] if index < len(self.grid.columns) else ""
        classes = " ".join(part for part in ("numeric" if numeric else "", f"tone-{c.tone}") if part)
        inside: str | Html = c.text
        if index == 0 and r.anchor:
            inside = Tag("a", {"href": f"#{r.anchor}"}).of(c.text)
        elif c.link and not SCHEMED.match(c.link):
            inside = Tag("a", {"href": c.link}).of(c.text)
        elif c.badge:
            inside = Pill(text=c.text, tone=c.tone).html()
        return Tag("td", {"class": classes, "data-label": label}).of(inside)
