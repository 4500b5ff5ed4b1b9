"""A run's progress as a client shows it: the Display it passes to the use case (the command's
terminal, the action's log, a silent one), and the one progress watch that fills it — a line when
the run starts and when stages add attempts, then one Printed line per attempt (a live line on a
terminal), the renderers imported ahead while the run waits on the network."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Protocol, TextIO

from convy.compare.comparison import NoBaseline
from convy.conduct.prefetch import Ahead, Prefetch
from convy.conduct.run import Run
from convy.conduct.stages import Staging
from convy.draw.progress import Printed
from convy.draw.untrusted import Untrusted
from convy.play.bench import Journal
from convy.store.runs import StoredRun
from convy.words import Plural


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
