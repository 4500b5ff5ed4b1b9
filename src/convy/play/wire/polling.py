"""Asking after an answer that is not done yet (an A2A task left `submitted` or `working`): the
request the dialect gave (Pending) sent again with a growing wait between, on a clock of its own,
until the answer is done or the turn's timeout has passed — then the attempt fails naming the state
the task stayed in."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

import msgspec

from convy.play.agent import AgentFailure
from convy.play.busy import Clock
from convy.play.wire.dialect import Pending

T = TypeVar("T")


class Backoff(msgspec.Struct, frozen=True):
    """The waits between asks: `first`, each next one `factor` times longer, never over `most`."""

    first: float = 0.25
    factor: float = 1.5
    most: float = 2.0

    def waits(self) -> Iterator[float]:
        wait = self.first
        while True:
            yield wait
            wait = min(wait * self.factor, self.most)


class Polling(msgspec.Struct, frozen=True):
    """The asks after one turn's unfinished answer at `shown` (its URL as errors show it), within
    `limit` seconds (the turn's timeout) of the turn being sent, counted on `clock`."""

    clock: Clock
    limit: float
    shown: str
    backoff: Backoff = Backoff()

    async def answer(self, pending: Pending, started: float, ask: Callable[[object], Awaitable[T]]) -> T:
        """What `ask` (one request with a JSON body) gets once the answer is done; AgentFailure
        ("timeout") when it is still at work `limit` seconds after `started`."""
        waits = self.backoff.waits()
        while True:
            left = self.limit - (self.clock.now() - started)
            if left <= 0:
                raise AgentFailure(
                    "timeout", f'the task at {self.shown} stayed "{pending.state}" for {self.limit:g} s'
                )
            await self.clock.sleep(min(next(waits), left))
            try:
                return await ask(pending.body)
            except Pending as later:
                pending = later
