"""How long the action keeps sending a request that was refused or failed on the way (GitHub's rate
limits, a busy results service or storage), built on tenacity and always bounded."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable
from typing import Protocol, TypeVar

import httpx
import msgspec
import tenacity

from convy.tools import Data
from convy_action.errors import ActionError

T = TypeVar("T")


class Transient(ActionError):
    """A request that may pass when sent again, after `wait` seconds (None: back off)."""

    def __init__(self, error: Exception, wait: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.wait = wait


class RetryClock(Protocol):
    """Where retries read the time and wait: `now` (monotonic seconds), `wall` (seconds since the
    epoch, for rate-limit resets and HTTP dates) and `sleep`."""

    def now(self) -> float: ...

    def wall(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The machine's clocks (convy.fakes.ManualClock is the one a test moves by hand)."""

    def now(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class Deadline(tenacity.stop.stop_base):
    """Stops the retries before a wait that would end more than `seconds` after they began."""

    def __init__(self, clock: RetryClock, seconds: float) -> None:
        self._clock = clock
        self._ends = clock.now() + seconds

    def __call__(self, state: tenacity.RetryCallState) -> bool:
        return self._clock.now() + (state.upcoming_sleep or 0.0) >= self._ends


class Retries(Data, frozen=True, kw_only=True):
    """How a request is tried again: at most `attempts` times and `total_wait` seconds in all,
    backing off from `first_wait`; a wait the service asks for (Retry-After, a rate limit's reset)
    is honoured up to `longest_wait`, and a longer one gives up at once; a secondary rate limit
    without advice waits `secondary_wait`."""

    attempts: int = 5
    first_wait: float = 1.0
    longest_wait: float = 60.0
    total_wait: float = 300.0
    secondary_wait: float = 60.0
    clock: RetryClock = msgspec.field(default_factory=SystemClock)

    def __post_init__(self) -> None:
        if self.attempts < 1 or min(self.first_wait, self.longest_wait, self.total_wait) < 0:
            raise ValueError("retries need one attempt or more and waits of zero or more")

    def call(self, attempt: Callable[[], T]) -> T:
        """The result of `attempt`, sent again while it raises Transient; the last error otherwise."""
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.attempts) | Deadline(self.clock, self.total_wait),
            wait=self._wait,
            sleep=self.clock.sleep,
            retry=tenacity.retry_if_exception_type(Transient),
            reraise=True,
        )
        try:
            return retrying(attempt)
        except Transient as transient:
            raise transient.error from None

    def verdict(self, response: httpx.Response, error: Exception, server_errors: bool) -> Exception:
        """What a failed `response` means: Transient when sending it again may pass, else `error`.
        A 429 or a rate-limited 403 was refused unprocessed; a 5xx only when `server_errors`."""
        status = response.status_code
        asked = self._asked(response, error)
        limited = status == 429 or (status == 403 and asked is not None)
        if not limited and not (server_errors and status >= 500):
            return error
        if asked is not None and asked > self.longest_wait:
            return error
        return Transient(error, asked)

    def _asked(self, response: httpx.Response, error: Exception) -> float | None:
        """The wait the answer asks for: Retry-After, else a spent rate limit's reset, else the
        secondary rate limit's minute; None when it does not say."""
        headers = response.headers
        after = headers.get("retry-after", "").strip()
        if after:
            try:
                return max(0.0, float(after))
            except ValueError:
                moment = email.utils.parsedate_tz(after)
                if moment is not None:
                    return max(0.0, email.utils.mktime_tz(moment) - self.clock.wall())
        reset = headers.get("x-ratelimit-reset", "").strip()
        if headers.get("x-ratelimit-remaining", "").strip() == "0" and reset.isdigit():
            return max(0.0, int(reset) - self.clock.wall())
        if "secondary rate limit" in str(error).lower():
            return self.secondary_wait
        return None

    def _wait(self, state: tenacity.RetryCallState) -> float:
        outcome = state.outcome
        failure = outcome.exception() if outcome is not None else None
        if isinstance(failure, Transient) and failure.wait is not None:
            return failure.wait
        return min(self.longest_wait, self.first_wait * 2.0 ** (state.attempt_number - 1))


PATIENT = Retries()
"""The retries of the action: five attempts, five minutes at most."""
