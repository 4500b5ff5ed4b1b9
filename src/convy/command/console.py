"""What every subcommand that reads run folders shares: the command's streams, the warnings about
damaged attempt lines (each said once however often a folder is read), and a run reviewed against
its baseline, its files written and its comparison printed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import convy
import convy.runs
from convy import ConfigurationError
from convy.tools import Untrusted


class Console:
    """The command's `out` and `err` streams, and the damage warnings printed on them so far."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err
        self._warned: set[str] = set()
        """The damage warnings printed already: a folder read twice (resumed, then reviewed) warns once."""

    def stored(self, folder: Path, what: str) -> convy.StoredRun:
        """A run folder read back, or a configuration error naming it."""
        try:
            run = convy.runs.Runs(folder.parent).one(folder)
        except (convy.NewerFormat, ValueError) as error:
            raise ConfigurationError(what, str(error)) from None
        try:
            damage = run.damage()
        except ValueError as error:
            raise ConfigurationError(what, str(error)) from None
        self.damaged(folder, damage)
        return run

    def damaged(self, folder: Path, damage: Sequence[convy.runs.Damage]) -> None:
        """A warning for each attempt line not counted (the first ten, then how many more), each
        printed once however often the folder is read."""
        lines = [f"{folder}: {Untrusted(text=one.text()).console(300)}" for one in damage[:10]]
        if len(damage) > 10:
            lines.append(f"{folder}: {len(damage) - 10} more attempt lines skipped")
        for line in lines:
            if line not in self._warned:
                self._warned.add(line)
                self.err.write(f"convy: warning: {line}\n")

    def summed(self, folder: Path) -> tuple[convy.StoredRun, convy.Summary]:
        """A run named on the command line, read back and summed up."""
        run = self.stored(folder, str(folder))
        return run, convy.runs.Summed.of(run).summary()

    def reviewed(self, folder: Path, baseline: Path | None, settings: convy.Settings) -> int:
        """Compare a run with its baseline (or the floor only), write its files, print, gate."""
        before = self.baseline(str(baseline) if baseline is not None else "")
        try:
            reviewed = convy.Reviewing(settings).gated(self.stored(folder, str(folder)), before)
        except convy.RunsDiffer as error:
            raise ConfigurationError(str(baseline), str(error)) from None
        return self.shown(reviewed)

    def baseline(self, path: str) -> convy.StoredRun | convy.NoBaseline:
        """The baseline run named on the command line (none when `path` is empty)."""
        if not path:
            return convy.NoBaseline(why="no baseline given")
        return self.stored(Path(path), path)

    def shown(self, reviewed: convy.Reviewed) -> int:
        """A reviewed run's files written and its comparison printed; the gate's exit code."""
        written = reviewed.written()
        self.out.write(reviewed.console() + "\n")
        for path in written:
            self.out.write(f"convy: wrote {path}\n")
        return reviewed.decision.exit_code
