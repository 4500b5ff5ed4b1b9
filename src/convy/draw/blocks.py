"""The blocks the comment is built of, kept under GitHub's limit on a comment's length: a table that
shows its first rows and a `… N more` row (never a cut row), the same for a list, their cells with
untrusted text made safe for a table, and a text's start."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import msgspec
from tabulate import tabulate

from convy.data import Data
from convy.draw.untrusted import ELLIPSIS, Untrusted


class Limit(Data, frozen=True, kw_only=True):
    """GitHub's limit on a comment's body. Characters are counted as UTF-16 code units, which is never
    less than the count of code points, so the body fits however GitHub counts."""

    characters: int

    def size(self, text: str) -> int:
        return len(text.encode("utf-16-le")) // 2

    def fitting(self, text: Callable[[int | None], str], parts: int, characters: int) -> str:
        """`text` of as many of its `parts` as fit in `characters`: `text(None)` is all of them,
        `text(n)` the first n and a line counting the rest (always shown)."""
        whole = text(None)
        if self.size(whole) <= characters:
            return whole
        low, high = 0, parts - 1
        while low < high:
            middle = (low + high + 1) // 2
            if self.size(text(middle)) <= characters:
                low = middle
            else:
                high = middle - 1
        return text(low)


class Cells(Protocol):
    """How untrusted text is shown on one line: in markdown or on a terminal."""

    def cell(self, text: str, limit: int) -> str: ...


class Excerpt(Data, frozen=True, kw_only=True):
    """The start of a text, twice `limit` characters (or all of it), ended by `…` when cut: enough to
    show `limit` characters once its blanks are collapsed, unless it is mostly blanks (then less is
    shown, still ended by `…`). So a long text is not cleaned whole only to be cut."""

    text: str
    limit: int

    def start(self) -> str:
        most = self.limit * 2
        return self.text if len(self.text) <= most else self.text[:most] + ELLIPSIS


class MarkdownCells(msgspec.Struct, frozen=True):
    """Untrusted text as inert markdown: no HTML, mention, link or image, `|` escaped, one line."""

    def cell(self, text: str, limit: int) -> str:
        return Untrusted(text=Excerpt(text=text, limit=limit).start()).cell(limit)


class GroupedTable(Data, frozen=True, kw_only=True):
    """A table whose rows come in groups (a scenario and its failed claims), drawn with tabulate in
    `style`; shortened by whole groups, the rest counted in a last `… N more <noun>` row."""

    headers: tuple[str, ...]
    groups: tuple[tuple[tuple[str, ...], ...], ...]
    noun: str
    style: str

    def text(self, count: int | None = None) -> str:
        """The table with its first `count` groups (all by default)."""
        shown = len(self.groups) if count is None else count
        rows = [list(row) for group in self.groups[:shown] for row in group]
        if shown < len(self.groups):
            more = f"… {len(self.groups) - shown:,} more {self.noun}"
            rows.append([more] + [""] * (len(self.headers) - 1))
        return str(tabulate(rows, headers=list(self.headers), tablefmt=self.style, disable_numparse=True))

    def within(self, characters: int, limit: Limit) -> str:
        """The table with as many groups as fit in `characters` (its header and the `… N more` row
        always shown)."""
        return limit.fitting(self.text, len(self.groups), characters)


class Listed(Data, frozen=True, kw_only=True):
    """A markdown list whose items come whole (an item and its nested lines); shortened by whole
    items, the rest counted in a last `… N more <noun>` item."""

    items: tuple[str, ...]
    noun: str

    def text(self, count: int | None = None) -> str:
        shown = len(self.items) if count is None else count
        lines = list(self.items[:shown])
        if shown < len(self.items):
            lines.append(f"- … {len(self.items) - shown:,} more {self.noun}")
        return "\n".join(lines)

    def within(self, characters: int, limit: Limit) -> str:
        """The list with as many items as fit in `characters` (the `… N more` item always shown)."""
        return limit.fitting(self.text, len(self.items), characters)
