"""How convy says things in its messages: a number with its noun agreeing ("1 turn", "2 turns"), a
text cut at a word boundary with "…" — the base every stage's messages may use."""

from __future__ import annotations

import msgspec


class Plural(msgspec.Struct, frozen=True):
    """A count and its noun (singular; `plural` when it is not the noun with an `s`)."""

    count: int
    noun: str
    plural: str = ""

    @property
    def word(self) -> str:
        """The noun alone, agreeing with the count."""
        if self.count == 1:
            return self.noun
        return self.plural or f"{self.noun}s"

    def text(self) -> str:
        """The count and its noun: `1 attempt`, `3 attempts`, `0 attempts`."""
        return f"{self.count:,} {self.word}"


class Shortened(msgspec.Struct, frozen=True):
    """A text of at most `most` characters: whole when it fits, else cut at the last word boundary
    that fits, with "…" (never mid-word, never a period added)."""

    text: str
    most: int

    def shown(self) -> str:
        if len(self.text) <= self.most:
            return self.text
        cut = self.text[: self.most - 1]
        space = cut.rfind(" ")
        if space >= self.most // 2:
            cut = cut[:space]
        return cut.rstrip(" ,;:") + "…"


class Sentence(msgspec.Struct, frozen=True):
    """A sentence's words, ended with a full stop unless they end a question or an exclamation
    already (never "…?.")."""

    words: str

    def text(self) -> str:
        return self.words if self.words.endswith(("?", "!", ".", "?)", "?`")) else f"{self.words}."
