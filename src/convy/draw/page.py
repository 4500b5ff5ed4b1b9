"""What a page shows, as view records: its headline, tiles, tables of rows of cells, charts, and
each scenario's window of attempts, which drawn.py writes as one standalone HTML file.

Every number in a view record was computed by the model (Summary, Comparison, GateDecision) and is
already formatted as text here in Python; the numbers the records also hold raw (a rate, the bounds
of its interval, a time) are only where a chart puts a mark. The page's script only filters tables
and opens what the address points at: it computes and draws nothing that is shown.

How the page stays safe with text an agent or a model wrote in it:

* The page is static HTML made in Python by markup.Tag: every text is escaped, every tag and
  attribute name is ours. An agent's Markdown is parsed by markdown-it-py (CommonMark, raw HTML off)
  into a tree of a few tag names and text (transcript.AgentMarkdown), drawn with the tag names
  window.py allows. Links and images become their text and their address in a code span: nothing
  of an agent's is clickable or loaded.
* The script builds its few nodes (the filters' notice) with createElement and textContent, never
  from HTML.
* The Content-Security-Policy allows no requests at all (`default-src 'none'`), images only from
  `data:`, and only the page's own script and style, by their SHA-256: a script, an event handler or
  a style attribute that got into the page anyway would not apply.
* Everything is shown with scripts blocked too: each scenario's window is a `<details>` whose id is
  its anchor, opened by `:target` (a browser may refuse the script of a page opened as a file)."""

from __future__ import annotations

from typing import Literal

from convy.data import Data, Tagged
from convy.draw.markup import Html

Tone = Literal["plain", "good", "bad", "warn", "note"]
"""How a value is coloured: good (green), bad (red), warn (amber), note (blue), plain."""


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


class PageRow(Data, frozen=True, kw_only=True):
    """One row of a table: its cells, its status (for the status filter), the text the text filter
    searches, and the anchor of the window its first cell links to, if any."""

    cells: tuple[Cell, ...]
    status: str = ""
    search: str = ""
    anchor: str = ""
    """The id of the scenario's window (`page.html#<anchor>` opens it)."""


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
    rows: tuple[PageRow, ...]
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
    """A scenario's window: its anchor (the id the page and the comment link to), its result, its
    figures, its failing claims and its attempts, each drawn (window.py) once it was chosen, so the
    attempts are never all held as objects."""

    title: str
    anchor: str
    result: str
    tone: Tone
    facts: tuple[str, ...]
    failing: tuple[Tile, ...]
    attempts: tuple[Html, ...]


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
    sections: tuple[Html, ...] = ()
    """Sections drawn already, after the tables (comparison.html's side-by-side blocks)."""
