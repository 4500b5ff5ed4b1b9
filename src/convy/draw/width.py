"""How wide a markdown table is drawn in a pull-request comment, to keep every table of it within
a phone's column: GitHub draws a table as wide as its longest cells, never wrapping
them. The width is worked out from the cells' characters at GitHub's 14 px system font, erring on
the wide side, and checked against Chromium by `benchmarks/comment_width.py`."""

from __future__ import annotations

import html
import re

import msgspec

COLUMN = 350
"""The comment's column on a phone, in pixels: a 400 px screen less the page's margins."""
PADDING = 27
"""A cell's padding (13 px each side) and its border, in pixels."""
BOLD = 1.05
"""How much wider a header's bold text is."""
SAFETY = 1.03
"""A margin over the letters' widths, so a table said to fit does."""
LETTERS: dict[str, float] = {
    letter: width
    for width, letters in (
        (2.67, "'"),
        (3.11, "ijl’"),
        (3.64, "|"),
        (3.89, " !,./:;I[\\]ft·"),
        (4.67, "()-`r“”{}"),
        (4.97, '"'),
        (5.45, "*"),
        (6.57, "^"),
        (7.0, "Jcksvxyz"),
        (7.68, "≥≤±"),
        (7.79, "0123456789#$?L_abdeghnopqu–"),
        (8.18, "+<=>~×−"),
        (8.55, "FTZ"),
        (9.34, "&ABEKPSVXY"),
        (10.11, "CDHNRUw"),
        (10.89, "GOQ"),
        (11.66, "Mm"),
        (12.45, "%"),
        (13.21, "W"),
        (14.0, "—…→←"),
        (14.21, "@"),
    )
    for letter in letters
}
"""Each letter's width in pixels at 14 px in Helvetica's metrics (as Arial and Liberation Sans
share them); another letter counts as OTHER."""
OTHER = 14.0
MONO = 7.14
"""A letter of a code span: 0.6 em of a monospace font at 85% of 14 px."""
CODE_PADDING = 9.52
"""A code span's padding, 0.4 em at 85% of 14 px each side."""
LINK = re.compile(r"\[([^\]]*)\]\(<?[^)>]*>?\)")
ESCAPE = re.compile(r"\\(.)")
CODE = re.compile(r"`+([^`]*)`+")


class CellWidth(msgspec.Struct, frozen=True):
    """One cell's markdown, and how many pixels its text takes once GitHub renders it."""

    markdown: str
    bold: bool = False

    def pixels(self) -> float:
        codes = [match.group(1) for match in CODE.finditer(self.markdown)]
        text = html.unescape(ESCAPE.sub(r"\1", LINK.sub(r"\1", CODE.sub("", self.markdown))))
        width = sum(LETTERS.get(letter, OTHER) for letter in text)
        width += sum(len(code) * MONO + CODE_PADDING for code in codes)
        return width * SAFETY * (BOLD if self.bold else 1)


class TableWidth(msgspec.Struct, frozen=True):
    """A table's headers and rows of markdown cells, and its width in pixels as GitHub draws it."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def pixels(self) -> float:
        columns = range(len(self.headers))
        return 1 + sum(
            PADDING
            + max(
                [CellWidth(self.headers[c], bold=True).pixels()]
                + [CellWidth(row[c]).pixels() for row in self.rows if c < len(row)]
            )
            for c in columns
        )

    def fits(self) -> bool:
        """Whether it fits a phone's column."""
        return self.pixels() <= COLUMN
