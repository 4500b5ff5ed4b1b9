"""Reusing verdicts: an attempt whose whole transcript — every user message and agent answer, in
order — equals that of an attempt already judged, of the same scenario with the same claims, checks
and judge model (a baseline attempt, or an earlier one of the same run), takes that attempt's
decision without a judge call.

The run's lookup, keyed by transcript, is filled as its attempts end, and each decision it gives
says where it came from."""

from __future__ import annotations

import asyncio
import hashlib

import msgspec

from convy.play.outcome import ClaimResult, Outcome, Reused, Turn, Verdict


class Dialogue(msgspec.Struct, frozen=True):
    """What was said in one attempt of a scenario, as a key: the scenario's name and a hash of
    every user message and agent answer, in order (steps, times and tokens left out)."""

    scenario: str
    digest: str

    @classmethod
    def of(cls, scenario: str, turns: tuple[Turn, ...]) -> Dialogue:
        said = msgspec.json.encode([(turn.user, turn.agent) for turn in turns])
        return cls(scenario, hashlib.sha256(said).hexdigest())


class Source(msgspec.Struct, frozen=True, kw_only=True):
    """A judged attempt whose decision can be reused: which one it is (`reused`), the judge's
    decisions on its claims (its checks are made again: they cost nothing) and what its judge call
    cost (USD; None unknown)."""

    reused: Reused
    claims: tuple[ClaimResult, ...]
    judge: float | None = None

    @classmethod
    def of(cls, run: str, outcome: Outcome) -> Source | None:
        """The attempt of run `run` as a source; None when it has no verdict to reuse (it failed,
        got no verdict, or has no dialogue)."""
        match outcome.decision:
            case Verdict(claims=claims) if outcome.turns:
                pass
            case _:
                return None
        if outcome.reused is not None:
            judge = outcome.saved.judge if outcome.saved is not None else None
        else:
            judge = outcome.cost.judge if outcome.cost is not None else None
        return cls(
            reused=Reused(run=run, scenario=outcome.scenario, index=outcome.index),
            claims=tuple(claim for claim in claims if not claim.checked),
            judge=judge,
        )


class Verdicts:
    """The decisions a run's attempts may reuse, by what was said (Dialogue): the baseline's (those of
    scenarios whose claims, checks and judge model are unchanged), the folder's own (a resumed run),
    then each of this run's attempts as it ends (`ended`). An attempt whose transcript an attempt
    under way is being judged on waits for that decision rather than asking the judge the same
    question at once; if no verdict comes of it, the next one asks."""

    def __init__(self, run: str = "") -> None:
        self.run = run
        """This run's name: what a reuse of its own attempts records."""
        self._known: dict[Dialogue, Source] = {}
        self._paired: dict[tuple[Dialogue, int], Source] = {}
        self._judging: dict[Dialogue, tuple[tuple[str, int], asyncio.Future[None]]] = {}

    def learn(self, run: str, outcome: Outcome) -> None:
        """Keep `outcome`, an attempt of run `run`, as a source: the first one for a transcript,
        and the one of its index (a baseline attempt is reused by the attempt of the same index
        when their transcripts are equal)."""
        source = Source.of(run, outcome)
        if source is not None:
            said = Dialogue.of(outcome.scenario, outcome.turns)
            self._known.setdefault(said, source)
            self._paired.setdefault((said, outcome.index), source)

    async def found(self, scenario: str, index: int, turns: tuple[Turn, ...]) -> Source | None:
        """The decision attempt `index` of `scenario` may reuse for `turns`; None when it must be
        judged (then `ended` must be told when it ends)."""
        said = Dialogue.of(scenario, turns)
        while True:
            known = self._paired.get((said, index)) or self._known.get(said)
            if known is not None:
                return known
            under_way = self._judging.get(said)
            if under_way is None:
                self._judging[said] = ((scenario, index), asyncio.get_running_loop().create_future())
                return None
            await asyncio.shield(under_way[1])

    def ended(self, outcome: Outcome) -> None:
        """One of this run's attempts ended: its verdict is known from now on, and those waiting
        for it go on."""
        self.learn(self.run, outcome)
        attempt = (outcome.scenario, outcome.index)
        for said, (owner, future) in tuple(self._judging.items()):
            if owner == attempt:
                del self._judging[said]
                if not future.done():
                    future.set_result(None)
