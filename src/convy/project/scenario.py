"""Scenario (read from YAML) and its Graded claims.

A check's message starts with the key it is about in backticks (`claims`, `claims[2]`, `grades`):
the file's reader (convy.project.document) points the error at that key's line."""

from __future__ import annotations

import hashlib

import msgspec

from convy.data import Declared


class Graded(Declared, frozen=True, kw_only=True):
    """A claim the judge answers with one of its grades; each grade says whether it passes."""

    claim: str
    grades: dict[str, bool]

    def __post_init__(self) -> None:
        if not self.claim.strip():
            raise ValueError("`claim` is empty: a graded claim needs its text")
        if not self.grades:
            raise ValueError("`grades` is empty: a graded claim needs its grades")
        if not any(self.grades.values()):
            raise ValueError("`grades` has no passing grade: at least one must map to true")


Claim = str | Graded


class Scenario(Declared, frozen=True, kw_only=True):
    """One scenario: the simulated user's brief, an optional opening, the claims to judge."""

    name: str = ""
    user: str
    claims: tuple[Claim, ...]
    opening: str = ""
    max_turns: int = 0
    tags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.user.strip():
            raise ValueError("`user` (the simulated user's brief) is empty")
        if not self.claims:
            raise ValueError("`claims` is empty: a scenario needs at least one claim")
        for index, claim in enumerate(self.claims):
            if isinstance(claim, str) and not claim.strip():
                raise ValueError(f"`claims[{index}]` is empty")
        if self.max_turns < 0:
            raise ValueError("`max_turns` must be 1 or more (leave it out for the `max-turns` setting)")

    def fingerprint(self) -> str:
        """A short hash of everything that decides how the scenario plays and is judged."""
        content = msgspec.json.encode(
            {
                "user": self.user,
                "opening": self.opening,
                "max_turns": self.max_turns,
                "claims": self.claims,
            }
        )
        return hashlib.sha256(content).hexdigest()[:16]
