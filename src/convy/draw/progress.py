"""A run's progress shown as it plays: a live line on a terminal, one line per finished attempt
elsewhere (CI logs)."""

from __future__ import annotations

import asyncio
import time
from typing import TextIO

from convy.draw.untrusted import Untrusted
from convy.play.outcome import Failed, NoVerdict, Outcome, Verdict
from convy.words import Plural


class Printed:
    """Shows each outcome as it is recorded: done/total, held, not held, without verdict, elapsed,
    and the time still to go. Scenario names, claims and reasons are untrusted text: printed on one
    line with control characters replaced."""

    def __init__(self, total: int, stream: TextIO, live: bool, most: int = 0) -> None:
        self._total = total
        self._most = most
        self._stream = stream
        self._live = live
        self._start = time.monotonic()
        self.done = 0
        self.held = 0
        self.failed = 0
        self.unjudged = 0

    def more(self, count: int, most: int = 0) -> None:
        """`count` attempts more to show (a further stage or round of adaptive repeats); `most`: the
        most attempts the stages may still bring the run to, these included (0: no more than these)."""
        self._total += count
        self._most = self.done + most if most else 0

    def _upto(self) -> str:
        """` (up to N attempts)` while stages may still add attempts past those to play now."""
        return f" (up to {Plural(self._most, 'attempt').text()})" if self._most > self._total else ""

    def record(self, outcome: Outcome) -> None:
        self.done += 1
        match outcome.decision:
            case Verdict(holds=True):
                self.held += 1
                mark = "held"
            case Verdict():
                self.failed += 1
                failing = [c.claim for c in outcome.decision.claims if not c.passed]
                mark = f"not held: {self._shown(failing[0], 70)}" if failing else "not held"
            case Failed(reason=reason):
                self.failed += 1
                mark = f"agent failed ({self._shown(reason, 60)})"
            case NoVerdict(reason=reason):
                self.unjudged += 1
                mark = f"no verdict ({self._shown(reason, 60)})"
        if self._live:
            self._stream.write("\r\x1b[2K" + self.line())
            if self.done == self._total:
                self._stream.write("\n")
        else:
            scenario = self._shown(outcome.scenario, 120)
            self._stream.write(
                f"[{self.done}/{self._total}{self._upto()}] {scenario} #{outcome.index + 1}: {mark} "
                f"({Plural(len(outcome.turns), 'turn').text()}, {outcome.seconds:.1f} s)\n"
            )
        self._stream.flush()

    def _shown(self, text: str, limit: int) -> str:
        return Untrusted(text=text).console(limit)

    async def ticking(self, seconds: float = 1.0) -> None:
        """On a terminal, redraw the live line every `seconds` (elapsed and ETA move between
        attempts too); until cancelled."""
        if not self._live:
            return
        while True:
            await asyncio.sleep(seconds)
            if self.done < self._total:
                self._stream.write("\r\x1b[2K" + self.line())
                self._stream.flush()

    def line(self) -> str:
        elapsed = time.monotonic() - self._start
        left = elapsed / self.done * (self._total - self.done) if self.done else 0.0
        return (
            f"{self.done}/{self._total} done{self._upto()} · {self.held} held · {self.failed} not held · "
            f"{self.unjudged} no verdict · {elapsed:.0f}s elapsed · ETA {left:.0f}s"
        )
