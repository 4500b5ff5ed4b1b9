"""A table of text cells drawn in tabulate's `simple` (the console) and `github` (the comment)
styles, exactly as tabulate draws them with its numbers left unparsed; tabulate itself, with the
wide-character tables it loads (about 14 MB and 0.1 s), is imported only for a table with a cell it
must measure: a character that takes no column or two, a line break, a tab, a terminal colour."""

from __future__ import annotations

import unicodedata

import msgspec

STYLES = {
    # style: (the padding of a cell, the text around and between cells, the line under the header's)
    "simple": (0, ("", "  ", ""), ("", "-", "  ", "")),
    "github": (1, ("|", "|", "|"), ("|", "-", "|", "|")),
}
HEADER_PADDING = 2
"""tabulate's MIN_PADDING: a column is at least its header's width and two."""


class TextTable(msgspec.Struct, frozen=True):
    """Rows of text under `headers`, every cell left-aligned, drawn in `style`."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    style: str

    def text(self) -> str:
        if (
            self.style not in STYLES
            or not self.headers
            or any(len(row) != len(self.headers) for row in self.rows)
            or not all(map(Narrow().text, (*self.headers, *map("".join, self.rows))))
        ):
            from tabulate import tabulate

            rows = [list(row) for row in self.rows]
            return str(tabulate(rows, headers=list(self.headers), tablefmt=self.style, disable_numparse=True))
        pad, (begin, between, end), (left, fill, cross, right) = STYLES[self.style]
        rows = [[cell.strip() for cell in row] for row in self.rows]
        widths = [
            max([len(header) + HEADER_PADDING, *(len(row[n]) for row in rows)])
            for n, header in enumerate(self.headers)
        ]
        space = " " * pad
        lines = [
            (
                begin
                + between.join(
                    space + cell.ljust(width) + space for cell, width in zip(row, widths, strict=True)
                )
                + end
            ).rstrip()
            for row in [list(self.headers), *rows]
        ]
        rule = (left + cross.join(fill * (width + 2 * pad) for width in widths) + right).rstrip()
        return "\n".join([lines[0], rule, *lines[1:]])


class Narrow(msgspec.Struct, frozen=True):
    """Whether a text's every character takes one column in a terminal, as tabulate's wcwidth
    counts them: printable, neither combining nor a format mark, not East Asian wide, among the
    alphabets, punctuation and symbols where wcwidth agrees (never the emoji's blocks)."""

    def text(self, text: str) -> bool:
        return text.isascii() and text.isprintable() or all(map(self.character, text))

    def character(self, character: str) -> bool:
        code = ord(character)
        if code < 0x7F:
            return code >= 0x20
        if not (0xA0 <= code < 0x1100 or 0x2000 <= code < 0x2600 or 0x2700 <= code < 0x2C00):
            return False
        return (
            character.isprintable()
            and unicodedata.east_asian_width(character) in ("Na", "N", "A", "H")
            and unicodedata.category(character)[0] not in "MC"
        )
