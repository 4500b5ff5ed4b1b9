"""A run's progress as a client shows it: the Display it passes to the use case (the command's
terminal, the action's log, a silent one), and the one progress watch that fills it — a line when
the run starts and when stages add attempts, then one Printed line per attempt (a live line on a
terminal), the renderers imported ahead while the run waits on the network."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TextIO

from convy.compare.comparison import NoBaseline
from convy.conduct.calibration import CalibrationProgress
from convy.conduct.prefetch import Ahead, Prefetch
from convy.conduct.run import Run
from convy.conduct.stages import Staging
from convy.draw.progress import Printed
from convy.draw.untrusted import Untrusted
from convy.play.bench import Journal
from convy.store.runs import StoredRun
from convy.words import Plural

STEPS = 10
"""How many times a calibration's count is said while it goes (and once at its end)."""
FEW = 100
"""Fewer labelled attempts than this are decided without a count: in a moment."""


class Display(Protocol):
    """Where a run's progress goes: Terminal, Silent, and the action's log."""

    def said(self, line: str) -> None:
        """A line about the run: how many attempts it plays, and where."""
        ...

    def named(self, folder: Path) -> str:
        """The run folder as the lines name it."""
        ...

    def printed(self, total: int, most: int) -> Printed:
        """The line per attempt, for `total` attempts (`most`: up to how many stages may bring)."""
        ...


class Terminal:
    """A display on the stream `out` (a live line when it is a terminal)."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def said(self, line: str) -> None:
        self._out.write(line + "\n")

    def named(self, folder: Path) -> str:
        return str(folder)

    def printed(self, total: int, most: int) -> Printed:
        return Printed(total, self._out, self._out.isatty(), most)


class Silent:
    """No display at all: what a client that shows progress its own way passes."""

    def said(self, line: str) -> None:
        pass

    def named(self, folder: Path) -> str:
        return str(folder)

    def printed(self, total: int, most: int) -> Printed:
        return Printed(total, io.StringIO(), False, most)


class Watch:
    """The progress of a run played against `baseline`, shown on `display`: called with the run and
    its missing attempts once the folder is held, and again for each stage that adds attempts."""

    def __init__(self, display: Display, baseline: StoredRun | NoBaseline) -> None:
        self._display = display
        self._baseline = baseline
        self.calibrating = CalibrationLines(display.said)
        """The judge's calibration before the first attempt, said on the display."""
        self._shown: list[Ahead] = []
        self._printed: list[Printed] = []

    def __call__(self, run: Run, missing: int) -> Journal:
        # while stages may add attempts, the progress line says how many at most
        most = Staging(run.spec).left(run.journal.outcomes()) if run.staged(self._baseline) else 0
        display = self._display
        if self._printed:
            display.said(f"convy: {Plural(missing, 'more attempt').text()} where the comparison is unclear")
            self._printed[0].more(missing, most)
            return self._shown[0]
        display.said(
            f"convy: {Plural(missing, 'attempt').text()} of {len(run.spec.expected())} to play against "
            f"{Untrusted(text=run.spec.agent).console(200)!r} → {display.named(run.journal.folder)}"
        )
        printed = display.printed(missing, most)
        self._printed.append(printed)
        self._shown.append(Ahead(printed, Prefetch()))
        return self._shown[0]

    async def ticking(self) -> None:
        """Redraw the live line as time passes (once the run has started; until cancelled)."""
        while not self._printed:
            await asyncio.sleep(0.05)
        await self._printed[0].ticking()


class CalibrationLines:
    """A calibration's progress as lines `said`: the stale and copied label decisions left out,
    each at its file:line (unless `stale` is false: `convy calibrate` lists them with its figures),
    the labelled attempts to decide, then how many are decided at each tenth of them — the count
    only for FEW or more (fewer are decided in a moment: nothing is said of them but what was left
    out)."""

    def __init__(self, said: Callable[[str], None], stale: bool = True) -> None:
        self._said = said
        self._stale = stale
        self._step = 0

    def __call__(self, progress: CalibrationProgress) -> None:
        if progress.line is None:
            self.started(progress)
            return
        step = progress.done * STEPS // max(1, progress.total)
        if progress.total >= FEW and (step > self._step or progress.done == progress.total):
            self._step = step
            self._said(f"convy: calibrating the judge: {progress.done:,} of {progress.total:,} decided")

    def started(self, progress: CalibrationProgress) -> None:
        if self._stale and progress.stale:
            left = Plural(len(progress.stale), "label decision").text()
            self._said(f"convy: {left} left out of the calibration:")
            for stale in progress.stale:
                text = Untrusted(text=stale.claim).console(120)
                self._said(f"  {stale.where} {stale.scenario}: {text!r}: {stale.why}")
        if progress.total >= FEW or (self._stale and progress.stale):
            attempts = Plural(progress.total, "labelled attempt").text()
            self._said(f"convy: calibrating the judge on {attempts}…")
