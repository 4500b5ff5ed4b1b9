"""How convy says a count: Plural, a number with its noun agreeing ("1 turn", "2 turns") — the
base every stage's messages may use."""

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
