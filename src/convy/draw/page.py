"""Page: what a page's script draws — the view records (View: Headline, Tile, Grid of Rows of Cells,
the charts Bars, Spreads and Trend, and a scenario's Window of attempts) — and Template, which writes
one page as a standalone HTML file.

Every number in a view record was computed by the model (Summary, Comparison, GateDecision) and is
already formatted as text here in Python; the numbers the records also hold raw (a rate, the bounds
of its interval, a time) are only where a chart puts a mark. The scripts in pages/ draw and filter,
and compute nothing that is shown.

How the page stays safe with text an agent or a model wrote in it:

* The HTML that Template writes holds no data at all. Everything a run said reaches the page as JSON
  in `<script type="application/json" id="data">`, encoded by msgspec with `<`, `>`, `&`, U+2028 and
  U+2029 written as `\\uXXXX` escapes, so no text in it can end that element.
* The scripts build every node from that data with createElement and textContent, never from HTML.
  An agent's Markdown is parsed in Python by markdown-it-py (CommonMark, raw HTML off) into a tree
  of a few tag names and text (see transcript.AgentMarkdown); window.js makes elements only of the tag
  names it allows and puts every string in as text. Links and images become their text and their
  address in a code span: nothing of an agent's is clickable or loaded.
* The Content-Security-Policy allows no requests at all (`default-src 'none'`), images only from
  `data:`, and only the page's own script and style, by their SHA-256: a script or an event handler
  that got into the page anyway would not run."""

from __future__ import annotations

import base64
import hashlib
import urllib.parse
from importlib import resources
from typing import Literal

import msgspec

from convy.data import Data, Tagged

Tone = Literal["plain", "good", "bad", "warn", "note"]
"""How a value is coloured: good (green), bad (red), warn (amber), note (blue), plain."""

ESCAPES = (
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    (b"&", b"\\u0026"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)
"""What JSON inside a script element has escaped. These characters occur in JSON only inside
strings, where the escape means the same character."""


class Headline(Data, frozen=True, kw_only=True):
    """The gate's decision: verdict, the rule that decided, the sentence that explains it."""

    verdict: str
    rule: str
    explanation: str
    tone: Tone


class Tile(Data, frozen=True, kw_only=True):
    """One figure at the top of a page: a label, the value, a line under it."""

    label: str
    value: str
    note: str = ""
    tone: Tone = "plain"


class Cell(Data, frozen=True, kw_only=True):
    """One cell of a table; `link` is a relative address within the results folder; a `badge` is
    drawn as a coloured label (a status)."""

    text: str
    tone: Tone = "plain"
    link: str = ""
    badge: bool = False


class Row(Data, frozen=True, kw_only=True):
    """One row of a table: its cells, its status (for the status filter), the text the text filter
    searches, and the window a click opens (an index into View.windows), if any."""

    cells: tuple[Cell, ...]
    status: str = ""
    search: str = ""
    window: int | None = None
    anchor: str = ""
    """The row's id, so `page.html#<anchor>` shows it (and opens its window)."""


class Choice(Data, frozen=True, kw_only=True):
    """One option of a status filter."""

    value: str
    label: str


class Grid(Data, frozen=True, kw_only=True):
    """A table with its columns, rows in the order shown, and its filters (`statuses` empty: no
    status filter; `filtered` false: no text filter either). `numeric` are the columns aligned right."""

    name: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    statuses: tuple[Choice, ...] = ()
    filtered: bool = True
    numeric: tuple[int, ...] = ()
    empty: str = "No row matches the filter."


class Interval(Data, frozen=True, kw_only=True):
    """A share between 0 and 1 with its interval, as a chart marks it; None is unknown (no mark)."""

    label: str
    text: str
    value: float | None = None
    low: float | None = None
    high: float | None = None


class BarRow(Data, frozen=True, kw_only=True):
    """One row of a bar chart: a bar per series."""

    label: str
    bars: tuple[Interval, ...]


class Bars(Tagged, frozen=True, kw_only=True, tag="bars"):
    """Shares as horizontal bars with whiskers for their intervals, one bar per series in each row."""

    title: str
    series: tuple[str, ...]
    rows: tuple[BarRow, ...]


class Band(Data, frozen=True, kw_only=True):
    """How a figure spread: least to most, with the median and the 90th percentile marked; `value`
    is the median as text, `text` the whole spread."""

    label: str
    value: str
    text: str
    least: float | None = None
    median: float | None = None
    p90: float | None = None
    most: float | None = None


class Tick(Data, frozen=True, kw_only=True):
    """A labelled mark on an axis."""

    value: float
    text: str


class Spreads(Tagged, frozen=True, kw_only=True, tag="spreads"):
    """Bands on one axis from 0 to `scale` (the largest value drawn), with its ticks."""

    title: str
    scale: float
    ticks: tuple[Tick, ...]
    rows: tuple[Band, ...]


class Trend(Tagged, frozen=True, kw_only=True, tag="trend"):
    """Shares over successive runs, oldest first, as a line with its interval as a band."""

    title: str
    points: tuple[Interval, ...]


Chart = Bars | Spreads | Trend


class Link(Data, frozen=True, kw_only=True):
    """A link to another page of the results folder, relative to this one."""

    text: str
    href: str


class Window(Data, frozen=True, kw_only=True):
    """A scenario's window: its figures, its failing claims and its attempts. Each attempt is
    transcript.AttemptView, encoded as it streamed past so the attempts are never all held as objects."""

    title: str
    facts: tuple[str, ...]
    failing: tuple[Tile, ...]
    attempts: tuple[msgspec.Raw, ...]


class View(Data, frozen=True, kw_only=True):
    """Everything one page shows."""

    kind: Literal["report", "comparison", "index"]
    title: str
    facts: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    headline: Headline | None = None
    tiles: tuple[Tile, ...] = ()
    charts: tuple[Chart, ...] = ()
    grids: tuple[Grid, ...] = ()
    windows: tuple[Window, ...] = ()


class ScriptData(msgspec.Struct, frozen=True):
    """JSON to put inside a `<script type="application/json">` element."""

    json: bytes

    def text(self) -> str:
        escaped = self.json
        for character, escape in ESCAPES:
            escaped = escaped.replace(character, escape)
        return escaped.decode()


class Source(msgspec.Struct, frozen=True):
    """The text of an inline script or style, with the hash a Content-Security-Policy allows it by."""

    text: str

    def __post_init__(self) -> None:
        if "</" in self.text or "<!--" in self.text:
            raise ValueError("an inline script or style must not contain '</' or '<!--'")

    def allowed(self) -> str:
        digest = base64.b64encode(hashlib.sha256(self.text.encode()).digest()).decode()
        return f"'sha256-{digest}'"


class Template(msgspec.Struct, frozen=True):
    """A page made of the shared parts in pages/ (`base`, and `window` for the scenario window):
    their CSS and scripts inlined, the icon as a data: address, the view as JSON."""

    parts: tuple[str, ...] = ("base",)

    def html(self, view: View) -> str:
        folder = resources.files("convy.draw") / "pages"
        style = Source("\n".join((folder / f"{part}.css").read_text(encoding="utf-8") for part in self.parts))
        script = Source("\n".join((folder / f"{part}.js").read_text(encoding="utf-8") for part in self.parts))
        icon = urllib.parse.quote((folder / "icon.svg").read_text(encoding="utf-8").strip(), safe="")
        policy = (
            f"default-src 'none'; script-src {script.allowed()}; style-src {style.allowed()}; "
            "img-src data:; base-uri 'none'; form-action 'none'"
        )
        data = ScriptData(msgspec.json.encode(view)).text()
        return (
            "<!doctype html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
            '<meta name="referrer" content="no-referrer">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<meta name="color-scheme" content="light dark">\n'
            "<title>convy</title>\n"
            f'<link rel="icon" href="data:image/svg+xml,{icon}">\n'
            f"<style>{style.text}</style>\n"
            "</head>\n<body>\n"
            '<main id="page"><noscript>This page draws the run with JavaScript; turn it on to see it.'
            "</noscript></main>\n"
            f'<script type="application/json" id="data">{data}</script>\n'
            f"<script>{script.text}</script>\n"
            "</body>\n</html>\n"
        )
