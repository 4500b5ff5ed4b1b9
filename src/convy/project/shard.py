"""The `shard` setting, `k/n`: which of the project's scenarios one of n jobs plays. Scenario i
(0-based, in declaration order) belongs to shard (i mod n) + 1, all its attempts with it, so each
shard gets every n-th scenario and the slices of one run never overlap."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

import msgspec

from convy.errors import ConfigurationError

SHARD = re.compile(r"\s*(\d{1,4})\s*/\s*(\d{1,4})\s*")
T = TypeVar("T")


class Slice(msgspec.Struct, frozen=True):
    """Shard `index` of `count` (1-based); count 0 is the whole run, unsharded."""

    index: int = 0
    count: int = 0

    @classmethod
    def read(cls, text: str) -> Slice:
        """The setting's text (`2/4`; empty: the whole run); ConfigurationError naming `shard`."""
        if not text.strip():
            return cls()
        found = SHARD.fullmatch(text)
        if found is None or not 1 <= int(found[1]) <= int(found[2]):
            raise ConfigurationError(
                "shard", "must be k/n with 1 ≤ k ≤ n, e.g. 2/4 (the second of four shards)"
            )
        return cls(int(found[1]), int(found[2]))

    @property
    def whole(self) -> bool:
        return self.count == 0

    @property
    def text(self) -> str:
        return f"{self.index}/{self.count}" if self.count else ""

    def owns(self, position: int) -> bool:
        """Whether the scenario at `position` (0-based, in declaration order) is this shard's."""
        return self.whole or position % self.count == self.index - 1

    def chosen(self, items: Sequence[T]) -> tuple[T, ...]:
        """This shard's items of the whole run's, in their order."""
        return tuple(item for position, item in enumerate(items) if self.owns(position))


WHOLE = Slice()
"""The whole run: no shard."""
