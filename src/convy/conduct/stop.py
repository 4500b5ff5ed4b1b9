"""Stopping a run being played on a signal: SIGTERM and SIGINT (Ctrl+C, a cancelled CI job) cancel
the task playing it, so the folder is marked interrupted; and what still runs a second later is
cancelled again, and again, so a cancellation swallowed somewhere below (a library racing its own
clean-up) never keeps the process playing after it was told to stop."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator

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
