"""VirtualTime: asyncio code run on an event loop whose clock is the test's. Whenever nothing is
ready, the clock jumps to the next timer instead of waiting for it, so a test of rates, patience
or backoff takes no real time and reads exact moments from `loop.time()` — never the wall clock."""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Jumping(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
    """A selector that never blocks: a wait of `timeout` seconds with nothing to read moves the
    virtual clock on by that much."""

    def __init__(self, clock: VirtualLoop) -> None:
        super().__init__()
        self._clock = clock

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        events: list[tuple[selectors.SelectorKey, int]] = super().select(0)
        if not events and timeout:
            self._clock.now += timeout
        return events


class VirtualLoop(asyncio.SelectorEventLoop):
    """An event loop on virtual time, starting at 0."""

    def __init__(self) -> None:
        self.now = 0.0
        super().__init__(Jumping(self))

    def time(self) -> float:
        return self.now


class VirtualTime:
    """Runs coroutines on a VirtualLoop."""

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        with asyncio.Runner(loop_factory=VirtualLoop) as runner:
            return runner.run(main)
