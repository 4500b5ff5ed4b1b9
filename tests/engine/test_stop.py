"""Stop: SIGTERM and Ctrl+C end a run even when a cancellation is swallowed below (virtual time)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from convy.conduct.stop import Stop
from tests.clock import VirtualTime


def test_a_swallowed_cancellation_is_followed_by_another_until_the_run_ends() -> None:
    async def stubborn() -> None:
        with contextlib.suppress(asyncio.CancelledError):  # swallowed, as a library racing its clean-up may
            await asyncio.sleep(100)
        await asyncio.sleep(100)

    async def playing() -> None:
        async with asyncio.TaskGroup() as group:
            group.create_task(stubborn())

    async def main() -> tuple[bool, float]:
        loop = asyncio.get_running_loop()
        task = loop.create_task(playing())
        await asyncio.sleep(5)
        Stop(task, every=1.0).stop()
        try:
            await task
        except asyncio.CancelledError:
            return True, loop.time()
        return False, loop.time()

    cancelled, moment = VirtualTime().run(main())
    assert cancelled and moment == pytest.approx(6.0), "stopped one second after the swallowed cancellation"


def test_a_run_that_ends_at_the_first_cancellation_is_not_cancelled_again() -> None:
    async def main() -> int:
        loop = asyncio.get_running_loop()
        task = loop.create_task(asyncio.sleep(100))
        await asyncio.sleep(1)
        stop = Stop(task, every=1.0)
        stop.stop()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(3)
        return len([t for t in asyncio.all_tasks() if t is not asyncio.current_task()])

    assert VirtualTime().run(main()) == 0
