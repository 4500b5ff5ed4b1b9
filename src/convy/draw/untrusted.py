"""Text an agent or a model wrote, made safe for GitHub's markdown and logs, a terminal, and the
HTML pages.

On GitHub none of it may act: no HTML of theirs, no @mention or #reference that notifies anyone, no
clickable URL (URLs are shown in code), no image, no link, no workflow command in a log. Nowhere may
it reorder or hide what a reader sees: its bidirectional overrides and isolates (U+202A–U+202E,
U+2066–U+2069) and control characters are replaced by U+FFFD."""

from __future__ import annotations

import re

from convy.data import Data

JOINER = "\u200b"
"""A zero-width space: after `@` or `#` it keeps the text as it looks and stops GitHub from making a
mention or a reference of it."""

ELLIPSIS = "…"

UNSAFE = str.maketrans(
    dict.fromkeys(
        [
            *range(0x00, 0x09),
            0x0D,
            *range(0x0E, 0x20),
            *range(0x7F, 0xA0),
            *range(0x202A, 0x202F),
            *range(0x2066, 0x206A),
        ],
        "\ufffd",
    )
)
"""Control characters (tab, line feed, vertical tab and form feed aside) and bidirectional overrides,
which can hide or reorder what a reader sees: each becomes U+FFFD."""

ANY_UNSAFE = re.compile("[" + "".join(re.escape(chr(code)) for code in UNSAFE) + "]")
"""Whether a text holds any of UNSAFE (a carriage return among them): most hold none, and a search
is quicker than a translation."""

PLAIN = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "\\": "&#92;",
        "`": "\\`",
        "*": "\\*",
        "_": "\\_",
        "[": "\\[",
        "]": "\\]",
        "|": "\\|",
        "~": "\\~",
        "$": "\\$",
        "@": "@" + JOINER,
    }
)
"""Plain text as markdown: HTML escaped; the characters that open code, emphasis, links, images,
strikethrough, math and table cells escaped; a backslash as an entity, so it can escape nothing of
ours; `@` followed by the joiner."""

REFERENCE = re.compile("#(?=[0-9])")
"""`#12` and `owner/repo#12` refer to an issue and notify it."""

LINKED = re.compile(r"://|www\.|mailto:|xmpp:", re.IGNORECASE)
"""A word GitHub would make a link of."""

TRAILING = ".,;:!?)"
"""The sentence's punctuation a link word may end with: left out of its code span."""

TICKS = re.compile("`+")

OPENING = re.compile(r"^([0-9]*)([#+=-]|(?<=[0-9])[.)])")
"""A line's start that would open a heading, a list or a thematic break."""

COMMAND = re.compile(r"^([\s\u180e\u200b-\u200d\u2060\ufeff]*)([:#])(?=:|#\[)", re.MULTILINE)
"""The start of a line that the Actions runner reads as a workflow command, `::name::` or `##[name]`,
after any blanks (and, to be safe, after invisible characters too)."""


class Cleaner:
    """What a text shown anywhere goes through first: its control characters (tab, line feed,
    vertical tab and form feed aside; a carriage return ends a line) and bidirectional overrides and
    isolates replaced by U+FFFD. One object for every text, so a page of thousands of texts makes no
    object per text."""

    def cleaned(self, text: str) -> str:
        if ANY_UNSAFE.search(text) is None:
            return text
        return text.replace("\r\n", "\n").replace("\r", "\n").translate(UNSAFE)


CLEANER = Cleaner()


class Untrusted(Data, frozen=True, kw_only=True):
    """Text an agent or a model wrote: shown as it is, never acted on."""

    text: str

    def cell(self, limit: int) -> str:
        """The text for a cell of a markdown table: on one line, cut to `limit` characters (the
        last one `…`), nothing in it active, and no `|` that ends the cell. The result has at most
        6 × limit + 1 characters."""
        return self._inline(limit, "\\|")

    def line(self, limit: int) -> str:
        """The text for one line of markdown, such as a reason in a list item: as `cell`, and safe
        at the start of a line (it opens no heading, list or quote)."""
        return self._inline(limit, "|")

    def block(self, limit: int) -> str:
        """The text as a fenced code block, its lines kept, cut to `limit` characters (the last one
        `…`): no line of it closes the fence, so it stays code inside `<details>` too. Put it between
        blank lines, outside any list. The result has at most 3 × limit + 8 characters."""
        text = self._cut(self._clean(), limit)
        longest = max((len(run) for run in TICKS.findall(text)), default=0)
        fence = "`" * max(3, longest + 1)
        return f"{fence}\n{text}\n{fence}"

    def logged(self) -> str:
        """The text for a GitHub Actions log: no line of it starts a workflow command (`::name::`,
        `##[name]`), even after blanks, whatever the runner takes for a line's end."""
        lines = "\n".join(self._clean().splitlines())
        return COMMAND.sub(r"\1\2" + JOINER, lines)

    def console(self, limit: int) -> str:
        """The text for one line of a terminal or a CI log: on one line, cut to `limit` characters,
        control characters (ANSI escapes among them) and bidirectional overrides replaced, and no
        workflow command at its start."""
        text = self._cut(" ".join(self._clean().split()), limit)
        return COMMAND.sub(r"\1\2" + JOINER, text)

    def page(self) -> str:
        """The text for an HTML page, where the page's markup escapes it as text: its lines and tabs
        kept, control characters and bidirectional overrides and isolates replaced by U+FFFD (HTML
        escaping leaves them, and they would reorder what the page shows)."""
        return self._clean()

    def _clean(self) -> str:
        return CLEANER.cleaned(self.text)

    def _cut(self, text: str, limit: int) -> str:
        if limit < 1:
            raise ValueError("a limit of 1 character or more is needed")
        return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS

    def _inline(self, limit: int, pipe: str) -> str:
        """The text on one line: each word with a link in a code span (whose `|` becomes `pipe`),
        the sentence's punctuation after it left outside the span; every other word escaped as plain
        text."""
        words = []
        for word in self._cut(" ".join(self._clean().split()), limit).split(" "):
            if LINKED.search(word):
                before = word[: len(word) - len(word.lstrip("("))]
                linked = word[len(before) :]
                while (
                    linked and linked[-1] in TRAILING and (linked[-1] != ")" or Unbalanced(linked).closes())
                ):
                    linked = linked[:-1]
                if not LINKED.search(linked):
                    before, linked = "", word
                after = word[len(before) + len(linked) :].translate(PLAIN)
                code = linked.replace("|", pipe)
                fence = "`" * (max((len(run) for run in TICKS.findall(code)), default=0) + 1)
                pad = " " if code.startswith("`") or code.endswith("`") else ""
                words.append(f"{before}{fence}{pad}{code}{pad}{fence}{after}")
            else:
                words.append(REFERENCE.sub("#" + JOINER, word).translate(PLAIN))
        return OPENING.sub(r"\1\\\2", " ".join(words))


class Unbalanced(Data, frozen=True):
    """A link word whose last `)` closes no `(` of its own: the sentence's, not the link's."""

    word: str

    def closes(self) -> bool:
        return self.word.count(")") > self.word.count("(")
