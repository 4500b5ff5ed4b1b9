"""A drafted scenario as its file says it: a name from the first user message (a slug made unique),
`source`, `tags: [drafted]`, the user's messages as `turns` (a replay: no user model is asked), and
the claims; a brief and claims a model drafted come under a line telling the reader to review them."""

from __future__ import annotations

import re

import msgspec
import yaml

from convy.project.scenario import Scenario

REVIEW = "# drafted from a recorded conversation: review the claims before relying on them"
"""The line above what a model drafted."""

WORDS = 6
"""The most words of the first user message a name takes."""


class Brief(msgspec.Struct, frozen=True):
    """What a model drafted from a conversation: the simulated user's brief and claims (empty:
    nothing drafted)."""

    user: str = ""
    claims: tuple[str, ...] = ()


class Slug(msgspec.Struct, frozen=True):
    """A name made of a text's first words: lower case, letters and digits joined by `-`."""

    text: str

    def name(self) -> str:
        words = re.findall(r"[a-z0-9]+", self.text.lower().replace("<", " ").replace(">", " "))
        return "-".join(words[:WORDS])[:60].strip("-") or "conversation"


class Draft(msgspec.Struct, frozen=True, kw_only=True):
    """One scenario drafted from a recorded conversation (its texts already masked)."""

    name: str
    source: dict[str, str | int]
    turns: tuple[str, ...]
    claims: tuple[str, ...] = ()
    brief: Brief = Brief()

    def text(self) -> str:
        head: dict[str, object] = {
            "name": self.name,
            "source": self.source,
            "tags": ["drafted"],
            "turns": list(self.turns),
        }
        text = self.dumped(head)
        drafted = self.brief.user or self.brief.claims
        tail: dict[str, object] = {}
        if self.brief.user:
            tail["user"] = self.brief.user
            tail["max_turns"] = len(self.turns)
        tail["claims"] = [*self.claims, *self.brief.claims]
        return text + (REVIEW + "\n" if drafted else "") + self.dumped(tail)

    def dumped(self, data: dict[str, object]) -> str:
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False)

    def scenario(self) -> Scenario:
        """The scenario the text declares, read back as `convy run` reads it (a check that it is
        one)."""
        return msgspec.convert(yaml.safe_load(self.text()), Scenario)
