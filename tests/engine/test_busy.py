"""Busy services: Places (requests at once, fewer while busy), Rate (per window), Patience
(Retry-After, backoff, giving up) and RetryAfter. Everything runs on virtual time (VirtualTime):
the moments asserted are the loop's clock, exact, whatever the machine's load."""

from __future__ import annotations

import asyncio
import datetime

import pytest

from convy.play.busy import Busy, GaveUp, Patience, Places, RetryAfter
from convy.play.rate import Pace
from tests.clock import VirtualTime


class Counter:
    """Calls that take a while and count how many run at once."""

    def __init__(self, seconds: float = 0.05) -> None:
        self.seconds = seconds
        self.now = 0
        self.most = 0
        self.calls = 0

    async def __call__(self) -> int:
        self.calls += 1
        number = self.calls
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(self.seconds)
        finally:
            self.now -= 1
        return number


class Refusing:
    """A call refused (Busy) its first `times` tries, then answered; it keeps when each try came."""

    def __init__(self, times: int, retry_after: float | None = 0.01, places: Places | None = None) -> None:
        self.times = times
        self.retry_after = retry_after
        self.places = places
        self.tries: list[float] = []
        self.limits: list[int] = []

    async def __call__(self) -> str:
        self.tries.append(asyncio.get_running_loop().time())
        if self.places is not None:
            self.limits.append(self.places.limit)
        if len(self.tries) <= self.times:
            raise Busy(self.retry_after, f"refused try {len(self.tries)}")
        return "done"


def places(at_once: int, patience: float = 2.0, rate: Pace | None = None) -> Places:
    return Places(at_once, rate or Pace(0), Patience(patience, first=0.01, most=0.05))


def test_places_allow_at_most_at_once_and_report_peak() -> None:
    async def run() -> tuple[list[int], int, int]:
        counter = Counter()
        limited = places(3)
        results = await asyncio.gather(*(limited.send(counter) for _ in range(10)))
        return sorted(results), counter.most, limited.peak

    results, most, peak = VirtualTime().run(run())
    assert results == list(range(1, 11))
    assert most == 3
    assert peak == 3


def test_held_places_count_against_sends() -> None:
    async def run() -> tuple[int, int]:
        counter = Counter()
        limited = places(2)
        async with limited.held():
            await asyncio.gather(*(limited.send(counter) for _ in range(4)))
        return counter.most, limited.taken

    most, taken = VirtualTime().run(run())
    assert most == 1
    assert taken == 0


def test_busy_halves_places_and_successes_give_them_back() -> None:
    async def run() -> list[int]:
        limited = places(8)
        seen = [limited.limit]
        await limited.send(Refusing(1))
        seen.append(limited.limit)
        await limited.send(Refusing(1))
        seen.append(limited.limit)
        for _ in range(2):
            await limited.send(Refusing(0))
        seen.append(limited.limit)
        for _ in range(3):
            await limited.send(Refusing(0))
        seen.append(limited.limit)
        for _ in range(100):
            await limited.send(Refusing(0))
        seen.append(limited.limit)
        return seen

    assert VirtualTime().run(run()) == [8, 4, 2, 3, 4, 8]


def test_busy_never_goes_under_one_place() -> None:
    async def run() -> list[int]:
        limited = places(2)
        refusing = Refusing(5, places=limited)
        await limited.send(refusing)
        return [*refusing.limits, limited.limit]

    # halved to one, stays one; the success at one place gives one back
    assert VirtualTime().run(run()) == [2, 1, 1, 1, 1, 1, 2]


def test_refusals_of_tries_sent_together_halve_once() -> None:
    async def run() -> int:
        limited = places(8)
        start = asyncio.Event()

        class Together:
            def __init__(self) -> None:
                self.tries = 0

            async def __call__(self) -> None:
                self.tries += 1
                if self.tries == 1:
                    await start.wait()
                    raise Busy(5.0)

        tasks = [asyncio.create_task(limited.send(Together())) for _ in range(4)]
        await asyncio.sleep(0.05)
        start.set()
        await asyncio.sleep(0.05)
        limit = limited.limit
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return limit

    assert VirtualTime().run(run()) == 4


def test_fewer_at_once_while_busy() -> None:
    async def run() -> tuple[int, int]:
        limited = places(4)
        refusing = Refusing(2, places=limited)
        await limited.send(refusing)
        lowered = refusing.limits[-1]
        counter = Counter(0.05)
        await asyncio.gather(*(limited.send(counter) for _ in range(3)))
        return lowered, counter.most

    lowered, most = VirtualTime().run(run())
    assert lowered == 1
    # the refused call's success gave back one place (2 now): two of the three run at once
    assert most == 2


def test_no_place_is_held_while_waiting_for_a_busy_service() -> None:
    async def run() -> list[str]:
        limited = places(1)
        order: list[str] = []

        refusing = Refusing(1, retry_after=0.3)

        async def first() -> None:
            await limited.send(refusing)
            order.append("first done")

        async def second() -> None:
            await asyncio.sleep(0.05)
            await limited.send(Counter(0.01))
            order.append("second done")

        await asyncio.gather(first(), second())
        return order

    assert VirtualTime().run(run()) == ["second done", "first done"]


def test_other_errors_are_not_retried() -> None:
    async def run() -> tuple[int, int]:
        limited = places(2)
        calls = 0

        async def broken() -> None:
            nonlocal calls
            calls += 1
            raise ValueError("boom")

        with pytest.raises(ValueError, match="boom"):
            await limited.send(broken)
        return calls, limited.taken

    assert VirtualTime().run(run()) == (1, 0)


def test_rate_never_exceeds_its_requests_per_window() -> None:
    async def run() -> list[float]:
        rate = Pace(3, window=0.3)
        moments: list[float] = []

        async def take() -> None:
            await rate.take()
            moments.append(asyncio.get_running_loop().time())

        await asyncio.gather(*(take() for _ in range(8)))
        return sorted(moments)

    moments = VirtualTime().run(run())
    assert len(moments) == 8
    for index in range(len(moments) - 3):
        assert moments[index + 3] - moments[index] >= 0.3 - 0.005
    # paced every 0.1 s, and each fourth send waits for its window (0.3 s and its margin) to pass
    assert moments[-1] - moments[0] == pytest.approx(0.703)


def test_rate_zero_is_no_limit() -> None:
    async def run() -> float:
        rate = Pace(0, window=10)
        loop = asyncio.get_running_loop()
        start = loop.time()
        for _ in range(1000):
            await rate.take()
        return loop.time() - start

    assert VirtualTime().run(run()) == 0.0


def test_places_send_through_their_rate() -> None:
    async def run() -> list[float]:
        limited = places(10, rate=Pace(2, window=0.2))
        refusing = Refusing(0)
        await asyncio.gather(*(limited.send(refusing) for _ in range(5)))
        return sorted(refusing.tries)

    tries = VirtualTime().run(run())
    assert tries[2] - tries[0] >= 0.2 - 0.005
    assert tries[4] - tries[2] >= 0.2 - 0.005


def test_patience_honours_retry_after() -> None:
    async def run() -> tuple[str, list[float]]:
        refusing = Refusing(1, retry_after=0.25)
        result = await places(1).send(refusing)
        return result, refusing.tries

    result, tries = VirtualTime().run(run())
    assert result == "done"
    assert len(tries) == 2
    assert tries[1] - tries[0] == pytest.approx(0.25)


def test_patience_gives_up_with_the_last_busy() -> None:
    async def run() -> tuple[GaveUp, Refusing, float]:
        refusing = Refusing(1000, retry_after=0.1)
        loop = asyncio.get_running_loop()
        start = loop.time()
        with pytest.raises(GaveUp) as caught:
            await places(1, patience=0.35).send(refusing)
        return caught.value, refusing, loop.time() - start

    gave_up, refusing, seconds = VirtualTime().run(run())
    assert len(refusing.tries) == 4, "tries at 0, 0.1, 0.2, 0.3 s; a wait to 0.4 s is not started"
    assert gave_up.busy.detail == "refused try 4"
    assert seconds == pytest.approx(0.3)
    assert isinstance(gave_up.__cause__, Busy)


def test_patience_does_not_start_a_wait_longer_than_it_lasts() -> None:
    async def run() -> tuple[int, float]:
        refusing = Refusing(1, retry_after=30.0)
        loop = asyncio.get_running_loop()
        start = loop.time()
        with pytest.raises(GaveUp):
            await places(1, patience=5.0).send(refusing)
        return len(refusing.tries), loop.time() - start

    tries, seconds = VirtualTime().run(run())
    assert tries == 1
    assert seconds == 0.0


def test_zero_patience_gives_up_at_the_first_busy() -> None:
    async def run() -> int:
        refusing = Refusing(1, retry_after=0.0)
        with pytest.raises(GaveUp):
            await places(1, patience=0.0).send(refusing)
        return len(refusing.tries)

    assert VirtualTime().run(run()) == 1


def test_backoff_without_retry_after_grows_and_is_capped() -> None:
    patience = Patience(10, first=0.1, most=0.4)

    async def run() -> list[float]:
        refusing = Refusing(4, retry_after=None)
        await Places(1, Pace(0), patience).send(refusing)
        return [later - earlier for earlier, later in zip(refusing.tries, refusing.tries[1:], strict=False)]

    waits = VirtualTime().run(run())
    assert len(waits) == 4
    # equal jitter: each wait is between half and all of min(most, first * 2**n)
    for wait, ceiling in zip(waits, (0.1, 0.2, 0.4, 0.4), strict=True):
        assert ceiling / 2 <= wait <= ceiling


def test_within_keeps_the_place_and_retries() -> None:
    async def run() -> tuple[str, int, int]:
        limited = places(1)
        refusing = Refusing(2)
        async with limited.held():
            result = await limited.within(refusing)
            taken = limited.taken
        return result, len(refusing.tries), taken

    assert VirtualTime().run(run()) == ("done", 3, 1)


def test_rejected_values() -> None:
    with pytest.raises(ValueError):
        Patience(-1)
    with pytest.raises(ValueError):
        Pace(-1)
    with pytest.raises(ValueError):
        Places(0, Pace(0), Patience(1))


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        (None, None),
        ("", None),
        ("3", 3.0),
        (" 1.5 ", 1.5),
        ("-4", 0.0),
        ("soon", None),
        ("Wed, 21 Oct 2015 07:28:30 GMT", 30.0),
        ("Wed, 21 Oct 2015 07:27:00 GMT", 0.0),
    ],
)
def test_retry_after_header(header: str | None, seconds: float | None) -> None:
    now = datetime.datetime(2015, 10, 21, 7, 28, 0, tzinfo=datetime.UTC)
    assert RetryAfter(header).seconds(now) == seconds


def test_a_rate_paces_its_sends_evenly_so_a_run_takes_what_the_limit_allows() -> None:
    async def sends() -> list[float]:
        rate = Pace(10, window=1.0)
        loop = asyncio.get_running_loop()
        moments = []
        for _ in range(11):
            await rate.take()
            moments.append(loop.time())
        return moments

    moments = VirtualTime().run(sends())
    gaps = [b - a for a, b in zip(moments, moments[1:], strict=False)]
    assert gaps[:9] == pytest.approx([0.1] * 9), "one send every window/limit seconds, never a burst"
    assert moments[-1] - moments[0] == pytest.approx(1.0 * (1 + Pace.MARGIN)), (
        "ten gaps of 0.1 s, the last stretched to the window and its margin: the time the limit allows"
    )
    assert all(sum(1 for m in moments if t <= m < t + 1.0) <= 10 for t in moments)
