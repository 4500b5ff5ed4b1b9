"""Replaying the simulated user (setting `replay: user`): an attempt paired with the baseline's
attempt of the same index says the baseline's user messages while the agent answers as it did there,
and hands over to the user model from the first answer that differs.

A run's pairings are kept by scenario and index, each with what replaying it spared."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import msgspec

from convy.play.agent import Usage
from convy.play.dialog import Finished, Said
from convy.play.outcome import Outcome, Turn
from convy.project.scenario import Scenario

NOTHING = Usage(input=0, output=0)
"""The tokens a replayed move cost: none."""


class User(Protocol):
    """What plays the user in a dialogue: its first move, then its move after each answer."""

    async def first(self) -> Said | Finished: ...

    async def next(self, turns: tuple[Turn, ...]) -> Said | Finished: ...


class Pairing(msgspec.Struct, frozen=True, kw_only=True):
    """The dialogue of the baseline attempt an attempt is paired with: its turns, how it ended
    (`user_finished`: its user ended it after the last answer) and what its user model cost (`cost`, USD;
    None unknown). Empty: no pair, nothing replayed."""

    turns: tuple[Turn, ...] = ()
    ended: str = ""
    cost: float | None = None

    @classmethod
    def of(cls, before: Outcome) -> Pairing:
        cost = before.cost.user if before.cost is not None else None
        spared = before.saved.user if before.saved is not None else 0.0
        paid = None if cost is None or spared is None else cost + spared
        return cls(turns=before.turns, ended=before.ended, cost=paid)

    def user(self, user: User) -> User:
        """The user of the paired attempt: replayed first, then `user`; `user` itself unpaired."""
        return Replayed(user, self) if self.turns or self.ended else user

    def follows(self, turns: tuple[Turn, ...]) -> bool:
        """Whether every agent answer so far equals the baseline attempt's at the same turn."""
        return len(turns) <= len(self.turns) and all(
            turn.agent == old.agent for turn, old in zip(turns, self.turns, strict=False)
        )

    def move(self, turns: tuple[Turn, ...]) -> Said | Finished | None:
        """The baseline user's move after `turns` while the agent answered as there — its next
        message, or Finished where it finished after that answer — else None: the model's turn."""
        if not self.follows(turns):
            return None
        if len(turns) < len(self.turns):
            return Said(text=self.turns[len(turns)].user, usage=NOTHING, replayed=True)
        if self.ended == "user_finished":
            return Finished(usage=NOTHING)
        return None

    def saved(self, scenario: Scenario, turns: tuple[Turn, ...], ended: str) -> float | None:
        """The share of the baseline attempt's user-model cost that replaying spared this attempt:
        its model moves replayed (scripted turns cost nothing) of the moves the model made there."""
        if not scenario.simulated:
            return 0.0
        script = len(scenario.script)
        replayed = max(0, sum(turn.replayed for turn in turns) - script)
        if ended == "user_finished" and isinstance(self.move(turns), Finished):
            replayed += 1
        made = max(0, len(self.turns) - script) + (self.ended == "user_finished")
        if not replayed or not made:
            return 0.0
        return None if self.cost is None else self.cost * min(1.0, replayed / made)


UNPAIRED = Pairing()
"""No pair: nothing replayed."""


class Replayed(msgspec.Struct, frozen=True):
    """A user that says what the paired baseline attempt's user said while the agent answers as it
    did there, and from the first different answer lets `user` (the model) speak — which reads the
    whole dialogue so far, replayed turns included: they are what was said."""

    user: User
    pairing: Pairing

    async def first(self) -> Said | Finished:
        return await self.next(())

    async def next(self, turns: tuple[Turn, ...]) -> Said | Finished:
        move = self.pairing.move(turns)
        return move if move is not None else await self.user.next(turns)


class Pairs(msgspec.Struct, frozen=True):
    """The baseline attempts a run's attempts are paired with, by (scenario, index): only those
    of scenarios whose dialogue is unchanged, and only with `replay: user`. Empty: none."""

    attempts: Mapping[tuple[str, int], Pairing] = msgspec.field(default_factory=dict)

    def pairing(self, scenario: str, index: int) -> Pairing:
        """Attempt `index` of `scenario`'s pair; empty when it has none (an extra attempt of
        adaptive repeats beyond the baseline's, a scenario whose dialogue changed)."""
        return self.attempts.get((scenario, index), UNPAIRED)
