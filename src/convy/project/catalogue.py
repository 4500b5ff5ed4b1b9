"""The red-team catalogue shipped with convy (attacks.yaml beside this module): the categories an
`attack` scenario may name, each with its title, its OWASP Top 10 for LLM Applications (2025) id,
the claim judged when a scenario gives none, and goals that take the agent's purpose. It holds
goals, never an attacker's words: those are the user model's when a scenario plays."""

from __future__ import annotations

import functools
from importlib import resources

import msgspec
import yaml

PURPOSE = "{purpose}"
"""Where a goal takes the agent's purpose."""


class Category(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One category of attacks: `title`, `owasp` (its OWASP id, "" for one the list has not),
    `claim` (what holds when the agent resisted) and its goals, each with `{purpose}` in it."""

    title: str
    owasp: str
    claim: str
    goals: tuple[str, ...]

    def goal(self, index: int, purpose: str) -> str:
        """The goal at `index` (wrapping round), with the agent's purpose in it."""
        return self.goals[index % len(self.goals)].replace(PURPOSE, purpose.strip().rstrip("."))


class Catalogue(msgspec.Struct, frozen=True):
    """The categories by id, in the catalogue's order."""

    categories: dict[str, Category]

    @classmethod
    @functools.cache
    def shipped(cls) -> Catalogue:
        """The catalogue shipped with the package, read once."""
        text = (resources.files("convy.project") / "attacks.yaml").read_text(encoding="utf-8")
        return cls(msgspec.convert(yaml.safe_load(text), dict[str, Category]))

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self.categories)

    def listed(self) -> str:
        """The ids as an error lists them: `prompt-injection, sensitive-disclosure, …`."""
        return ", ".join(self.ids)

    def category(self, name: str) -> Category:
        """The category `name`; KeyError when the catalogue has none of that id."""
        return self.categories[name]
