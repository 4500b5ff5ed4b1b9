"""`convy run` and `convy resume`: a run played into its folder (the demo's servers started first
for `--demo`), its progress on the terminal, SIGTERM and Ctrl+C stopping it with the folder kept (and
a closed output, as `convy run | head` closes it), then reviewed against its baseline and gated."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TextIO

import convy
from convy import SETTING_NAMES, ConfigurationError, Flags, Plural, Sources, Untrusted
from convy.command.calibrationshown import CalibrationShown
from convy.command.console import Console
from convy.command.demorun import Demo

EXIT_CONFIG, EXIT_INTERRUPTED = 2, 130


class Playing:
    """A run to play from the command line, with the command's `console` and `environ`."""

    def __init__(self, console: Console, environ: Mapping[str, str]) -> None:
        self._console = console
        self._environ = dict(environ)

    def exit_code(self, arguments: argparse.Namespace) -> int:
        flags = Flags(SETTING_NAMES).given(arguments)
        with contextlib.ExitStack() as stack:
            environ = dict(self._environ)
            demo = Demo(flags, environ)
            resumed = Path(arguments.run_folder) if arguments.command == "resume" else None
            if getattr(arguments, "demo", False) or (resumed is not None and demo.made(resumed)):
                flags, environ = demo.started(stack)
            return self.played(arguments, flags, environ)
        return EXIT_CONFIG

    def played(self, arguments: argparse.Namespace, flags: dict[str, object], environ: dict[str, str]) -> int:
        console = self._console
        resume = Path(arguments.run_folder) if arguments.command == "resume" else None
        if resume is not None and "agent-url" not in flags and (resume / "run.json").exists():
            with contextlib.suppress(Exception):
                flags.setdefault("agent", convy.RunJournal(resume).header().spec.agent)
        sources = Sources(flags, environ, Path.cwd())
        project = convy.Project(sources.settings(), sources, environ)
        with Slow(console.err, "convy: still reading the project (its scenario files, its agent)…"):
            prepared = convy.Session(project=project, resume=resume).prepared()
        if resume is not None:
            try:
                console.damaged(resume, convy.RunJournal(resume).damage())
            except ValueError as error:
                raise ConfigurationError(str(resume), str(error)) from None
        baseline = getattr(arguments, "baseline", "")
        before: convy.StoredRun | convy.NoBaseline = convy.NO_BASELINE
        if baseline:
            before = console.stored(Path(baseline), str(baseline))
        shown: list[convy.Printed] = []
        stops: list[convy.Stop] = []

        def watch(run: convy.Run, missing: int) -> convy.Ahead:
            # while stages may add attempts, the progress line says how many at most
            most = convy.Staging(run.spec).left(run.journal.outcomes()) if run.staged(before) else 0
            if shown:
                console.out.write(
                    f"convy: {Plural(missing, 'more attempt').text()} where the comparison is unclear\n"
                )
                shown[0].more(missing, most)
                return convy.Ahead(shown[0], convy.Prefetch())
            console.out.write(
                f"convy: {Plural(missing, 'attempt').text()} of {len(run.spec.expected())} to play "
                f"against {Untrusted(text=run.spec.agent).console(200)!r} → {run.journal.folder}\n"
            )
            shown.append(convy.Printed(missing, console.out, console.out.isatty(), most))
            return convy.Ahead(shown[0], convy.Prefetch())

        async def play() -> convy.Run:
            with self.terminable(stops):
                ticker = asyncio.get_running_loop().create_task(ticking())
                try:
                    calibrating = CalibrationShown(console.err)
                    return await prepared.play(convy.Provenance(), watch, before, calibrating)
                finally:
                    ticker.cancel()

        async def ticking() -> None:
            while not shown:
                await asyncio.sleep(0.05)
            await shown[0].ticking()

        try:
            run = asyncio.run(play())
        except convy.RunInUse as error:
            raise ConfigurationError("run", str(error)) from None
        except (KeyboardInterrupt, asyncio.CancelledError):
            console.err.write("\n" + Interrupted(prepared.folder).said() + "\n")
            return stops[0].exit_code if stops else EXIT_INTERRUPTED
        except (BrokenPipeError, ExceptionGroup) as error:
            if isinstance(error, ExceptionGroup) and error.subgroup(BrokenPipeError) is None:
                raise
            with contextlib.suppress(OSError):
                console.err.write(
                    "convy: the output was closed; the run folder is kept: finish it with "
                    f"`convy resume {prepared.folder}`\n"
                )
            raise BrokenPipeError("the output was closed") from None
        return console.reviewed(run.journal.folder, Path(baseline) if baseline else None, project.settings)

    @contextlib.contextmanager
    def terminable(self, stops: list[convy.Stop]) -> Iterator[None]:
        """SIGTERM and Ctrl+C cancel the run, so the folder is marked interrupted (Stop, appended
        to `stops` so the exit code can name the signal)."""
        task = asyncio.current_task()
        if task is None:
            yield
            return
        stop = convy.Stop(task)
        stops.append(stop)
        with stop.installed():
            yield


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


class Interrupted:
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
