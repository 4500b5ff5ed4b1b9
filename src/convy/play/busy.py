"""Busy, which an agent, model or judge raises when its service refused a request unprocessed;
RetryAfter, the wait such a service asked for; Patience, how long a participant waits for a busy
service, and GaveUp when it is over; Rate, requests per minute; Places, a participant's requests at
once and per minute, fewer at once while its service is busy, which sends and retries them as its
patience allows."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import email.utils
import random
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import NoReturn, TypeVar

import msgspec
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_before_delay

T = TypeVar("T")


class Busy(Exception):
    """The service refused the request before acting on it (HTTP 429 or 503): it may be sent again.
    `retry_after` is the wait in seconds the service asked for, or None when it did not say."""

    def __init__(self, retry_after: float | None = None, detail: str = "") -> None:
        super().__init__(detail or "busy")
        self.retry_after = retry_after
        self.detail = detail


class GaveUp(Exception):
    """A participant's patience ran out while its service stayed busy; `busy` is the last refusal.
    For an agent the attempt has NoVerdict (`agent_busy`); for a model it is a ModelFailure."""

    def __init__(self, busy: Busy, seconds: float) -> None:
        super().__init__(f"still busy after waiting up to {seconds:g} s: {busy}")
        self.busy = busy
        self.seconds = seconds


class RetryAfter(msgspec.Struct, frozen=True):
    """A `Retry-After` header's text as a busy service sent it: seconds, or an HTTP date."""

    header: str | None

    def seconds(self, now: datetime.datetime | None = None) -> float | None:
        """The wait it asks for in seconds (0 or more), or None when absent or unreadable.
        `now` (UTC) is the moment a date is counted from, the current time when not given."""
        text = (self.header or "").strip()
        if not text:
            return None
        try:
            return max(0.0, float(text))
        except ValueError:
            pass
        try:
            moment = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=datetime.UTC)
        start = now if now is not None else datetime.datetime.now(datetime.UTC)
        return max(0.0, (moment - start).total_seconds())


class Patience(msgspec.Struct, frozen=True):
    """How long, in seconds in all, a participant waits for a busy service before it gives up.

    Between tries it waits what the service asked for (`Retry-After`), else an exponential backoff
    from `first` seconds, doubling up to `most`, with jitter. It never starts a wait that would end
    after its `seconds` from the first try: it gives up at once instead (GaveUp)."""

    seconds: float
    first: float = 1.0
    most: float = 30.0

    def __post_init__(self) -> None:
        if self.seconds < 0:
            raise ValueError("patience must be 0 seconds or more")
        if self.first <= 0 or self.most < self.first:
            raise ValueError("the backoff needs 0 < first <= most")

    def retrying(self) -> AsyncRetrying:
        """A fresh tenacity loop that repeats a request only while its service is Busy."""
        return AsyncRetrying(
            retry=retry_if_exception_type(Busy),
            wait=self.wait,
            stop=stop_before_delay(self.seconds),
            retry_error_callback=self.gave_up,
        )

    def wait(self, state: RetryCallState) -> float:
        """Seconds to wait before the next try: the Busy's own `retry_after`, else the backoff."""
        error = state.outcome.exception() if state.outcome is not None else None
        match error:
            case Busy(retry_after=float() | int() as after):
                return float(after)
            case _:
                backoff = min(self.most, self.first * 2.0 ** min(state.attempt_number - 1, 32))
                return backoff * random.uniform(0.5, 1.0)

    def gave_up(self, state: RetryCallState) -> NoReturn:
        """Ends the loop when patience ran out: GaveUp with the last Busy."""
        error = state.outcome.exception() if state.outcome is not None else None
        match error:
            case Busy():
                raise GaveUp(error, self.seconds) from error
            case _:
                raise GaveUp(Busy(detail="busy"), self.seconds)


class Rate:
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


class Places:
    """A participant's requests at once and per minute.

    It allows `at_once` requests (or conversations) at the same time, and fewer while its service is
    busy: each Busy halves the places (never under one; refusals to requests sent before the last
    halving count once), and every `places` successes in a row give one back, up to `at_once`.
    `send` takes a place for each try, sends through the `rate`, and retries a Busy try as its
    `patience` allows — the place is let go while it waits. An agent holds one place for a whole
    conversation (`held`) and sends its turns with `within`, which keeps that place while it waits.
    `peak` is the most places ever taken at once; `limit` the places allowed now."""

    def __init__(self, at_once: int, rate: Rate, patience: Patience) -> None:
        if at_once < 1:
            raise ValueError("a participant needs at least one place")
        self._at_once = at_once
        self._rate = rate
        self._patience = patience
        self._limit = at_once
        self._taken = 0
        self._successes = 0
        self._lowered = 0
        self._waiting: list[asyncio.Future[None]] = []
        self.peak = 0

    @property
    def limit(self) -> int:
        """How many places it allows now."""
        return self._limit

    @property
    def taken(self) -> int:
        """How many places are taken now."""
        return self._taken

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        """Holds one place while the block runs (waiting for one first)."""
        await self._take()
        try:
            yield
        finally:
            self._give()

    async def send(self, call: Callable[[], Awaitable[T]]) -> T:
        """The result of `call()`, tried with a place of its own each time and through the rate,
        again while it raises Busy and patience lasts; GaveUp when patience ran out. Any other
        error comes out at once."""
        async for attempt in self._patience.retrying():
            with attempt:
                async with self.held():
                    return await self._once(call)
        raise RuntimeError("the retry loop ended without a result")

    async def within(self, call: Callable[[], Awaitable[T]]) -> T:
        """As `send`, for a caller that already holds a place (`held`): only the rate and the
        retries; the caller's place stays taken while it waits."""
        async for attempt in self._patience.retrying():
            with attempt:
                return await self._once(call)
        raise RuntimeError("the retry loop ended without a result")

    async def _once(self, call: Callable[[], Awaitable[T]]) -> T:
        lowered = self._lowered
        await self._rate.take()
        try:
            result = await call()
        except Busy:
            self._lower(lowered)
            raise
        self._grow()
        return result

    def _lower(self, seen: int) -> None:
        self._successes = 0
        if seen == self._lowered:
            self._limit = max(1, self._limit // 2)
            self._lowered += 1

    def _grow(self) -> None:
        self._successes += 1
        if self._limit < self._at_once and self._successes >= self._limit:
            self._limit += 1
            self._successes = 0
            self._wake()

    async def _take(self) -> None:
        while self._taken >= self._limit:
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiting:
                    self._waiting.remove(waiter)
        self._taken += 1
        self.peak = max(self.peak, self._taken)

    def _give(self) -> None:
        self._taken -= 1
        self._wake()

    def _wake(self) -> None:
        waiting, self._waiting = self._waiting, []
        for waiter in waiting:
            if not waiter.done():
                waiter.set_result(None)
