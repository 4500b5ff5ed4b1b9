"""Stopping a run on a signal, and the stop signal a client brings to the run it plays: SIGTERM and
SIGINT (Ctrl+C, a cancelled CI job) cancel the task playing it, so the folder is marked interrupted;
what still runs a second later is cancelled again, and again, so a cancellation swallowed below (a
library racing its own clean-up) never keeps the process playing after it was told to stop."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Protocol

SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Stop:
    """The signals' handler for `task` (the one playing the run) on its event loop; `every` is the
    seconds between the cancellations that follow the first."""

    def __init__(self, task: asyncio.Task[object], every: float = 1.0) -> None:
        self._task = task
        self._loop = task.get_loop()
        self._every = every
        self.received = 0
        """The signal that stopped the run (0: none yet)."""

    @property
    def exit_code(self) -> int:
        """128 + the signal's number (130 for Ctrl+C, 143 for SIGTERM), as a shell reports it."""
        return 128 + (self.received or signal.SIGINT)

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Handle the signals while the run plays — each one the process was not started ignoring
        (a shell starts background jobs ignoring SIGINT, so that Ctrl+C is not meant for them)."""
        handled = [number for number in SIGNALS if signal.getsignal(number) is not signal.SIG_IGN]
        for number in handled:
            self._loop.add_signal_handler(number, self.stop, number)
        try:
            yield
        finally:
            for number in handled:
                self._loop.remove_signal_handler(number)

    def stop(self, number: int = signal.SIGINT) -> None:
        """Cancel the run's task now — the cancellation carries the signal's name, which run.json
        records as the reason — and what is left of it every `every` seconds until it ends."""
        self.received = self.received or number
        self._task.cancel(signal.Signals(number).name)
        self._loop.call_later(self._every, self.again)

    def again(self) -> None:
        if self._task.done():
            return
        for task in asyncio.all_tasks(self._loop):
            if task is not self._task and not task.done():
                task.cancel()
        self._loop.call_later(self._every, self.again)


class StopSignal(Protocol):
    """What stops a run a client plays: it is told the task playing the run while it plays, and
    says the exit code of a run it stopped. Signals (SIGTERM and Ctrl+C) and NoSignal."""

    def installed(self, task: asyncio.Task[object]) -> contextlib.AbstractContextManager[object]: ...

    @property
    def exit_code(self) -> int: ...


class Signals:
    """SIGTERM and Ctrl+C stop the run (a Stop on its task) — in the main thread only, where a
    process's signals are handled; elsewhere they are left to the thread that handles them."""

    def __init__(self) -> None:
        self._stops: list[Stop] = []

    @contextlib.contextmanager
    def installed(self, task: asyncio.Task[object]) -> Iterator[object]:
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        stop = Stop(task)
        self._stops.append(stop)
        with stop.installed():
            yield self

    @property
    def exit_code(self) -> int:
        """128 + the number of the signal that stopped the run (130 when none did: Ctrl+C)."""
        return self._stops[0].exit_code if self._stops else 128 + signal.SIGINT


class NoSignal:
    """Nothing stops the run but its caller cancelling it (a client with a stop of its own)."""

    def installed(self, task: asyncio.Task[object]) -> contextlib.AbstractContextManager[object]:
        return contextlib.nullcontext(self)

    @property
    def exit_code(self) -> int:
        return 128 + signal.SIGINT


NO_SIGNAL = NoSignal()
"""No stop signal (an argument's default)."""
