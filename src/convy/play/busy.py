"""Busy services and how long each participant waits for them: what an agent, model or judge raises
when its service refused a request unprocessed (or, for a model, failed in a way worth asking
again), the wait such a service asked for and every header it may say it in, and when patience is
over.

A participant's requests at once and per minute (a pace, rate.py) are sent and retried through
places of its own, fewer at once while its service is busy, as its patience allows; patience is
counted on a clock, the real one or a fake in tests."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import email.utils
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, NoReturn, Protocol, TypeVar

import msgspec

from convy.errors import ConvyError
from convy.play.errorbody import Masked
from convy.play.rate import Pace

if TYPE_CHECKING:
    from tenacity import AsyncRetrying, RetryCallState

T = TypeVar("T")


class Busy(ConvyError):
    """The service refused the request before acting on it (HTTP 429 or 503), or — for a model,
    whose calls have no side effects — failed in a way worth asking again (5xx, a timeout, a
    connection refused or reset): it may be sent again. `retry_after` is the wait in seconds the
    service asked for, or None when it did not say; `status` the HTTP status (0: none); `message`
    the service's own words (one line, masked); `kind` what happened: `busy` (refused), `failure`
    (an error answer), `timeout`, `connection`."""

    def __init__(
        self,
        retry_after: float | None = None,
        detail: str = "",
        *,
        status: int = 0,
        message: str = "",
        kind: str = "busy",
    ) -> None:
        super().__init__(detail or "busy")
        self.retry_after = retry_after
        self.detail = detail
        self.status = status
        self.message = message
        self.kind = kind

    def hiding(self, masked: Masked) -> Busy:
        """The same refusal with every secret of `masked` hidden in all it says."""
        detail, message = masked.text(self.detail), masked.text(self.message)
        return Busy(self.retry_after, detail, status=self.status, message=message, kind=self.kind)


class GaveUp(ConvyError):
    """A participant's patience ran out while its service stayed busy; `busy` is the last refusal,
    `seconds` how long it actually waited (from its first try to giving up), `patience` how long
    it would have. For an agent the attempt has NoVerdict (`agent_busy`); for a model it is a
    ModelFailure."""

    def __init__(self, busy: Busy, seconds: float, patience: float | None = None) -> None:
        allowed = seconds if patience is None else patience
        asked = f"asked to wait {busy.retry_after:g} s; " if busy.retry_after is not None else ""
        super().__init__(f"gave up after waiting {seconds:.1f} s ({asked}patience {allowed:g} s): {busy}")
        self.busy = busy
        self.seconds = seconds
        self.patience = allowed


class Clock(Protocol):
    """The time patience is counted in: `now()` in seconds (monotonic), `sleep(seconds)`."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class WallClock:
    """The real time: the running event loop's clock (time.monotonic in asyncio's own loops, so a
    loop on virtual time drives it in tests; time.monotonic outside a loop) and asyncio.sleep."""

    def now(self) -> float:
        try:
            return asyncio.get_running_loop().time()
        except RuntimeError:
            return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


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


DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


class Hints(msgspec.Struct, frozen=True):
    """The headers of a busy answer, read for the wait it asks for; the first found wins:
    `retry-after-ms` (milliseconds), `Retry-After` (seconds or an HTTP date), `llm_provider-retry-after`
    (seconds, LiteLLM), then `x-ratelimit-reset-requests` and `x-ratelimit-reset-tokens` (durations
    such as `1s`, `6m0s`, `20ms`, OpenAI)."""

    headers: Mapping[str, str]

    def seconds(self, now: datetime.datetime | None = None) -> float | None:
        """The wait in seconds (0 or more), or None when no header gives a readable one."""
        found = {name.lower(): value for name, value in self.headers.items()}
        milliseconds = Number(found.get("retry-after-ms", "")).value()
        if milliseconds is not None:
            return milliseconds / 1000
        after = RetryAfter(found.get("retry-after")).seconds(now)
        if after is not None:
            return after
        provider = Number(found.get("llm_provider-retry-after", "")).value()
        if provider is not None:
            return provider
        for name in ("x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"):
            duration = Duration(found.get(name, "")).seconds()
            if duration is not None:
                return duration
        return None


class Number(msgspec.Struct, frozen=True):
    """A header's text read as a number of 0 or more; None when it is not one."""

    text: str

    def value(self) -> float | None:
        try:
            number = float(self.text.strip())
        except ValueError:
            return None
        return number if number >= 0 and number == number and number != float("inf") else None


class Duration(msgspec.Struct, frozen=True):
    """A duration as OpenAI's rate-limit headers write it: `1s`, `6m0s`, `20ms`, `1h2m3.5s`, or a
    plain number of seconds."""

    text: str

    def seconds(self) -> float | None:
        text = self.text.strip().lower()
        if not text:
            return None
        plain = Number(text).value()
        if plain is not None:
            return plain
        parts = DURATION.findall(text)
        if not parts or "".join(number + unit for number, unit in parts) != text:
            return None
        scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
        return sum(float(number) * scale[unit] for number, unit in parts)


class Patience(msgspec.Struct, frozen=True):
    """How long, in seconds in all, a participant waits for a busy service before it gives up.

    Between tries it waits what the service asked for (`Retry-After`), else an exponential backoff
    from `first` seconds, doubling up to `most`, with jitter. It never starts a wait that would end
    after its `seconds` from the first try: it gives up at once instead (GaveUp)."""

    seconds: float
    first: float = 1.0
    most: float = 30.0
    clock: Clock = msgspec.field(default_factory=WallClock)

    def __post_init__(self) -> None:
        if self.seconds < 0:
            raise ValueError("patience must be 0 seconds or more")
        if self.first <= 0 or self.most < self.first:
            raise ValueError("the backoff needs 0 < first <= most")

    def retrying(self, start: float | None = None) -> AsyncRetrying:
        """A fresh tenacity loop that repeats a request only while its service is Busy; its time
        is the Patience's clock, from `start` (the first try), else from this moment. tenacity is
        loaded here, the first time a service is busy, not at start-up (decision 12)."""
        from tenacity import AsyncRetrying, retry_if_exception_type

        trying = Trying(self, self.clock.now() if start is None else start)
        return AsyncRetrying(
            retry=retry_if_exception_type(Busy),
            wait=self.wait,
            stop=trying.over,
            sleep=self.clock.sleep,
            retry_error_callback=trying.gave_up,
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


class Trying(msgspec.Struct, frozen=True):
    """One request's tries under a Patience, started at `start` (the Patience's clock)."""

    patience: Patience
    start: float

    def waited(self) -> float:
        return max(0.0, self.patience.clock.now() - self.start)

    def over(self, state: RetryCallState) -> bool:
        """Whether the next wait would end after the patience: then it gives up at once."""
        return self.waited() + (state.upcoming_sleep or 0.0) >= self.patience.seconds

    def gave_up(self, state: RetryCallState) -> NoReturn:
        """Ends the loop when patience ran out: GaveUp with the last Busy and the time waited."""
        error = state.outcome.exception() if state.outcome is not None else None
        match error:
            case Busy():
                raise GaveUp(error, self.waited(), self.patience.seconds) from error
            case _:
                raise GaveUp(Busy(detail="busy"), self.waited(), self.patience.seconds)


class Places:
    """A participant's requests at once and per minute.

    It allows `at_once` requests (or conversations) at the same time, and fewer while its service is
    busy: each Busy halves the places (never under one; refusals to requests sent before the last
    halving count once), and every `places` successes in a row give one back, up to `at_once`.
    `send` takes a place for each try, sends through the `rate`, and retries a Busy try as its
    `patience` allows — the place is let go while it waits. An agent holds one place for a whole
    conversation (`held`) and sends its turns with `within`, which keeps that place while it waits.
    `peak` is the most places ever taken at once; `limit` the places allowed now."""

    def __init__(self, at_once: int, rate: Pace, patience: Patience) -> None:
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
        error comes out at once. The first try is made directly; the retry loop starts only if it
        was refused (most requests never are), as if that refusal had been its first try."""
        return await self._retried(call, placed=True)

    async def within(self, call: Callable[[], Awaitable[T]]) -> T:
        """As `send`, for a caller that already holds a place (`held`): only the rate and the
        retries; the caller's place stays taken while it waits."""
        return await self._retried(call, placed=False)

    async def _retried(self, call: Callable[[], Awaitable[T]], placed: bool) -> T:
        """`call()` tried, each try with a place of its own when `placed`, again while it raises
        Busy and patience lasts."""
        start = self._patience.clock.now()
        refused: Busy | None = None
        try:
            return await self._tried(call, placed)
        except Busy as busy:
            refused = busy
        async for attempt in self._patience.retrying(start):
            with attempt:
                if refused is not None:
                    first, refused = refused, None
                    raise first
                return await self._tried(call, placed)
        raise RuntimeError("the retry loop ended without a result")

    async def _tried(self, call: Callable[[], Awaitable[T]], placed: bool) -> T:
        if not placed:
            return await self._once(call)
        async with self.held():
            return await self._once(call)

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
