"""Bench: plays attempts against an agent concurrently and hands each Outcome to a journal the
moment it ends; results come back in declaration order, not completion order."""

from __future__ import annotations

import asyncio
import datetime
import traceback
from collections.abc import Sequence
from typing import Protocol

import msgspec

from convy.play.agent import Agent
from convy.play.attempt import Attempt
from convy.play.dialog import Judge
from convy.play.model import Model
from convy.play.outcome import STAMP, NoVerdict, Outcome


class Journal(Protocol):
    """Where a bench puts each attempt the moment it ends."""

    def record(self, outcome: Outcome) -> None: ...


class Bench(msgspec.Struct, frozen=True, kw_only=True):
    """An agent, the simulated user's model and a judge, already wrapped with their limits
    (QueuedAgent, PatientModel...); `ahead` is how many attempts may be under way at once."""

    agent: Agent
    user: Model
    judge: Judge
    ahead: int = 16

    async def run(self, attempts: Sequence[Attempt], journal: Journal) -> tuple[Outcome, ...]:
        """Play every attempt; one that breaks never stops the others."""
        results: list[Outcome | None] = [None] * len(attempts)
        room = asyncio.Semaphore(self.ahead)

        async def play(position: int, attempt: Attempt) -> None:
            async with room:
                outcome = await self._outcome(attempt)
                journal.record(outcome)
                results[position] = outcome

        async with asyncio.TaskGroup() as group:
            for position, attempt in enumerate(attempts):
                group.create_task(play(position, attempt))
        return tuple(outcome for outcome in results if outcome is not None)

    async def _outcome(self, attempt: Attempt) -> Outcome:
        try:
            return await attempt.outcome(self.agent, self.user, self.judge)
        except Exception as error:  # convy's own bug in one attempt: recorded on it, the run goes on
            return Outcome(
                scenario=attempt.scenario.name,
                index=attempt.index,
                fingerprint=attempt.scenario.fingerprint(),
                turns=(),
                seconds=0.0,
                decision=NoVerdict(
                    reason="internal_error",
                    detail="".join(traceback.format_exception_only(error)).strip(),
                ),
                ended="internal_error",
                started=datetime.datetime.now(datetime.UTC).strftime(STAMP),
            )
