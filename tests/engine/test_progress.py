"""Progress while playing: a live line on a terminal, one line per attempt in CI logs."""

from __future__ import annotations

import asyncio
import io

from convy.draw.progress import Printed
from convy.play.outcome import ClaimResult, Failed, NoVerdict, Outcome, Verdict
from tests.clock import VirtualTime


def outcome(index: int, decision: Verdict | Failed | NoVerdict) -> Outcome:
    return Outcome(scenario="s", index=index, fingerprint="f", turns=(), seconds=0.5, decision=decision)


HELD = Verdict(holds=True, claims=(ClaimResult(claim="c", passed=True),))
NOT = Verdict(holds=False, claims=(ClaimResult(claim="The agent helps.", passed=False),))


def test_in_ci_each_finished_attempt_is_one_line() -> None:
    stream = io.StringIO()
    printed = Printed(3, stream, live=False)
    for index, decision in enumerate((HELD, NOT, Failed(reason="http_500"))):
        printed.record(outcome(index, decision))
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and "\r" not in stream.getvalue()
    assert "[2/3] s #2: not held: The agent helps." in lines[1] and "agent failed (http_500)" in lines[2]


def test_on_a_terminal_one_line_is_redrawn_with_counts_elapsed_and_eta() -> None:
    stream = io.StringIO()
    printed = Printed(3, stream, live=True)
    printed.record(outcome(0, HELD))
    printed.record(outcome(1, NoVerdict(reason="model_failure")))
    text = stream.getvalue()
    assert text.count("\r\x1b[2K") == 2 and "\n" not in text
    assert "2/3 done · 1 held · 0 not held · 1 no verdict" in text and "ETA" in text


def test_the_live_line_ticks_between_attempts() -> None:
    stream = io.StringIO()
    printed = Printed(2, stream, live=True)

    async def wait() -> None:
        ticker = asyncio.get_running_loop().create_task(printed.ticking(0.02))
        await asyncio.sleep(0.1)
        ticker.cancel()

    VirtualTime().run(wait())
    assert stream.getvalue().count("0/2 done") >= 3
