"""Pacing requests per minute for every participant that shares a provider's limit: never more than
the limit in any sliding window."""

from __future__ import annotations

import asyncio
from collections import deque


class Pace:
    """At most `per_minute` sends in any `window` seconds (60 by default; 0 means no limit), for
    every participant that shares it (the user's model and the judge share their provider's).

    Sends are paced, one every window/per_minute seconds, so a run takes the time the limit allows
    and no burst meets a provider's shorter-period limits; and the moments of the last sends are
    kept, so no window — lengthened by a small margin for the way to the server — ever holds more
    than `per_minute`. Moments are the event loop's time."""

    MARGIN = 0.005
    """The share of the window added to it, so sends counted here arrive inside the limit."""

    def __init__(self, per_minute: int, window: float = 60.0) -> None:
        if per_minute < 0:
            raise ValueError("requests per minute must be 0 (no limit) or more")
        if window <= 0:
            raise ValueError("the window must be longer than 0 seconds")
        self._most = per_minute
        self._window = window * (1 + self.MARGIN)
        self._gap = window / per_minute if per_minute else 0.0
        self._next = 0.0
        self._sent: deque[float] = deque()
        self._turn = asyncio.Lock()

    async def take(self) -> None:
        """Returns when one more send fits, and counts it as sent now."""
        if self._most == 0:
            return
        async with self._turn:
            loop = asyncio.get_running_loop()
            while True:
                now = loop.time()
                while self._sent and self._sent[0] <= now - self._window:
                    self._sent.popleft()
                paced = self._next - now
                full = self._sent[0] + self._window - now if len(self._sent) >= self._most else 0.0
                wait = max(paced, full)
                if wait <= 0:
                    self._sent.append(now)
                    self._next = now + self._gap
                    return
                await asyncio.sleep(wait)
