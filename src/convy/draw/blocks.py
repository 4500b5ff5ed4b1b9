"""The blocks the comment is built of, kept under GitHub's limit on a comment's length: a table that
shows its first rows and a `… N more` row (never a cut row), the same for a list, their cells with
untrusted text made safe for a table, and a text's start."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import msgspec

from convy.data import Data
from convy.draw.columns import TextTable
from convy.draw.untrusted import ELLIPSIS, Untrusted
from convy.draw.width import TableWidth


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
    """A table whose rows come in groups (a scenario and its failed claims), drawn as tabulate draws it in
    `style`; shortened by whole groups, the rest counted in a last `… N more <noun>` row. In a
    comment (`github`), one wider than a phone's column is drawn as a list instead."""

    headers: tuple[str, ...]
    groups: tuple[tuple[tuple[str, ...], ...], ...]
    noun: str
    style: str
    bare: int = 1
    """In a list (a table too wide for a phone): the leading cells shown without their header."""

    def text(self, count: int | None = None) -> str:
        """The table with its first `count` groups (all by default)."""
        shown = len(self.groups) if count is None else count
        rows = [list(row) for group in self.groups[:shown] for row in group]
        if self.style == "github" and not TableWidth(self.headers, tuple(map(tuple, rows))).fits():
            return self.listed(shown)
        if shown < len(self.groups):
            more = f"… {len(self.groups) - shown:,} more {self.noun}"
            rows.append([more] + [""] * (len(self.headers) - 1))
        return TextTable(self.headers, tuple(map(tuple, rows)), self.style).text()

    def within(self, characters: int, limit: Limit) -> str:
        """The table with as many groups as fit in `characters` (its header and the `… N more` row
        always shown)."""
        return limit.fitting(self.text, len(self.groups), characters)

    def listed(self, shown: int) -> str:
        """The table as a markdown list, for a comment where it would be wider than a phone: a group
        is an item and its further rows nested under it."""
        lines: list[str] = []
        for first, *rest in self.groups[:shown]:
            lines.append(f"- {self.item(first)}")
            lines += [f"  - {self.item(row)}" for row in rest]
        if shown < len(self.groups):
            lines.append(f"- … {len(self.groups) - shown:,} more {self.noun}")
        return "\n".join(lines)

    def item(self, row: tuple[str, ...]) -> str:
        """A row as a list item: its first `bare` cells as they are (the first in bold), each other
        one after its header unless it starts with it."""
        parts = []
        for place, (header, cell) in enumerate(zip(self.headers, row, strict=False)):
            if not cell:
                continue
            if place == 0:
                parts.append(f"**{cell}**")
            elif place < self.bare or not header or cell.startswith(header):
                parts.append(cell)
            else:
                parts.append(f"{header} {cell}")
        return " · ".join(parts)


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
