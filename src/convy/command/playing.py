"""`convy run` and `convy resume`: the engine's use case played from the command line — its
progress on the terminal, SIGTERM and Ctrl+C stopping it with the folder kept (and a closed output,
as `convy run | head` closes it), then its files written and its comparison printed."""

from __future__ import annotations

import argparse
import contextlib
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

import convy
from convy import SETTING_NAMES, ConfigurationError, Flags
from convy.command.console import Console
from convy.tools import Plural, Startup

EXIT_CONFIG, EXIT_INTERRUPTED = 2, 130


class Playing:
    """A run to play from the command line, with the command's `console` and `environ`."""

    def __init__(self, console: Console, environ: Mapping[str, str]) -> None:
        self._console = console
        self._environ = dict(environ)

    def exit_code(self, arguments: argparse.Namespace) -> int:
        console = self._console
        resume = str(arguments.run_folder) if arguments.command == "resume" else ""
        flags = Flags(SETTING_NAMES).given(arguments)
        plan = convy.Plan(
            folder=Path.cwd(), flags=flags, environ=self._environ, demo=arguments.demo, resume=resume
        )
        with plan.opened() as opened:
            with Slow(console.err, "convy: still reading the project (its scenario files, its agent)…"):
                ready = opened.prepared()
            console.damaged(ready.folder, ready.damage())
            baseline = str(getattr(arguments, "baseline", "") or "")
            before = console.baseline(baseline)
            Startup().settled()
            try:
                reviewed = ready.played(convy.Terminal(console.out), convy.Signals(), before)
            except convy.RunsDiffer as error:
                raise ConfigurationError(str(baseline), str(error)) from None
            except convy.Interrupted as stopped:
                console.err.write("\n" + StoppedRun(stopped.folder).said() + "\n")
                return stopped.exit_code
            except (BrokenPipeError, ExceptionGroup) as error:
                if isinstance(error, ExceptionGroup) and error.subgroup(BrokenPipeError) is None:
                    raise
                with contextlib.suppress(OSError):
                    console.err.write(
                        "convy: the output was closed; the run folder is kept: finish it with "
                        f"`convy resume {ready.folder}`\n"
                    )
                raise BrokenPipeError("the output was closed") from None
            return console.shown(reviewed)
        return EXIT_CONFIG


class Slow:
    """A line on `stream` when the block it wraps takes longer than `after` seconds (reading tens of
    thousands of scenario files), so a long silence is never mistaken for a hang."""

    def __init__(self, stream: TextIO, line: str, after: float = 3.0) -> None:
        self._stream = stream
        self._line = line
        self._after = after
        self._timer: threading.Timer | None = None

    def __enter__(self) -> Slow:
        self._timer = threading.Timer(self._after, self.say)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def say(self) -> None:
        self._stream.write(self._line + "\n")
        self._stream.flush()


class StoppedRun:
    """What a run stopped by a signal leaves to say: its folder to resume, or — stopped before the
    first attempt, while the judge was calibrated — that there is none, and where the judge's
    decisions made so far are kept for the next run."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def said(self) -> str:
        if (self.folder / "run.json").exists():
            return f"convy: interrupted; the run folder is kept: finish it with `convy resume {self.folder}`"
        lines = self.folder / "calibration.jsonl"
        kept = len(lines.read_bytes().splitlines()) if lines.exists() else 0
        if not kept:
            return "convy: interrupted before the first attempt; there is no run to resume"
        return (
            "convy: interrupted while the judge was calibrated, before the first attempt; there is no "
            f"run to resume: {Plural(kept, 'decision').text()} of the judge on the labels are kept in "
            f"{lines} and the next run reuses them"
        )
