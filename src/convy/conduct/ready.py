"""A run prepared by the use case (everything checked, nothing sent) and played with a client's
display and stop signal, in an event loop of its own, then reviewed: compared with its baseline and
gated. A stopped run is an Interrupted error that names its folder, kept to be resumed."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from convy.compare.comparison import NO_BASELINE, NoBaseline
from convy.conduct.display import Display, Watch
from convy.conduct.run import Run
from convy.conduct.session import Prepared
from convy.conduct.stop import NO_SIGNAL, StopSignal
from convy.errors import ConfigurationError, ConvyError
from convy.project.settings import Settings
from convy.store.attempts import Damage
from convy.store.journal import NewerFormat, RunJournal
from convy.store.lock import RunInUse
from convy.store.runfile import Provenance
from convy.store.runs import Runs, StoredRun

if TYPE_CHECKING:
    from convy.conduct.review import Reviewed

UNRECORDED = Provenance()
"""A run played outside CI: no commit, ref or workflow run recorded (an argument's default)."""


class Interrupted(ConvyError):
    """The run was stopped (a signal, Ctrl+C, a cancellation) before it ended; its `folder` is kept,
    marked interrupted, for `convy resume`. `exit_code`: 128 + the signal's number."""

    def __init__(self, folder: Path, exit_code: int) -> None:
        super().__init__(f"interrupted; the run folder is kept: {folder}")
        self.folder = folder
        self.exit_code = exit_code


class Reviewing(msgspec.Struct, frozen=True):
    """Run folders reviewed with the `settings`' gate."""

    settings: Settings

    def reviewed(self, folder: Path, baseline: StoredRun | NoBaseline = NO_BASELINE) -> Reviewed:
        """The run in `folder` compared with `baseline` and gated: the comparison, the decision, and
        the files to write (comment, pages, JUnit XML). RunsDiffer when the two cannot be compared."""
        return self.gated(self.read(folder), baseline)

    def read(self, folder: Path) -> StoredRun:
        """The run in `folder` read back; ConfigurationError naming the folder when it cannot be."""
        try:
            return Runs(folder.parent).one(folder)
        except (NewerFormat, ValueError) as error:
            raise ConfigurationError(str(folder), str(error)) from None

    def gated(self, run: StoredRun, baseline: StoredRun | NoBaseline = NO_BASELINE) -> Reviewed:
        """The stored `run` compared with `baseline` and gated."""
        from convy.conduct.review import Review  # the renderers' side, imported once the run has played

        return Review.gated(run, baseline, self.settings).reviewed()


class Ready(msgspec.Struct, frozen=True):
    """A run `prepared` to play: its scenarios and agent checked, its folder chosen, nothing sent."""

    prepared: Prepared

    @property
    def name(self) -> str:
        """The agent played, as its run folders are filed (`results/<name>/`)."""
        return self.prepared.name

    @property
    def folder(self) -> Path:
        """The run folder it plays into (a new one, or the one resumed)."""
        return self.prepared.folder

    def secrets(self) -> tuple[str, ...]:
        """The values the agent holds that must never be shown (header values, a client secret)."""
        return self.prepared.agent.secrets()

    def damage(self) -> Sequence[Damage]:
        """The attempt lines of a resumed folder that cannot be counted (none for a new run)."""
        if self.prepared.recorded is None:
            return ()
        try:
            return RunJournal(self.folder).damage()
        except ValueError as error:
            raise ConfigurationError(str(self.folder), str(error)) from None

    def played(
        self,
        display: Display,
        stop: StopSignal = NO_SIGNAL,
        baseline: StoredRun | NoBaseline = NO_BASELINE,
        provenance: Provenance = UNRECORDED,
    ) -> Reviewed:
        """Play the run's missing attempts against `baseline`, progress on `display`, until done or
        `stop` stops it (Interrupted), then review it: the comparison, the gate's decision, the
        files to write. It plays in an event loop of its own — in a thread of its own when the
        caller's thread already runs one (pytest-asyncio), so it never needs the caller's loop.
        ConfigurationError when another process plays the folder; RunsDiffer when the baseline
        cannot be compared with it (the run is played and kept: review it again without one)."""
        run = self.looped(self.playing(display, stop, baseline, provenance), stop)
        return Reviewing(self.prepared.project.settings).reviewed(run.journal.folder, baseline)

    def looped(self, playing: Coroutine[object, object, Run], stop: StopSignal) -> Run:
        try:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return asyncio.run(playing)
            return self.threaded(playing)
        except RunInUse as error:
            raise ConfigurationError("run", str(error)) from None
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise Interrupted(self.folder, stop.exit_code) from None

    def threaded(self, playing: Coroutine[object, object, Run]) -> Run:
        """`playing` run in a thread and a loop of its own; Ctrl+C in the caller's thread (where
        the signal lands) cancels it there, so its folder is marked interrupted before it ends."""
        tasks: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[object]]] = []

        async def tracked() -> Run:
            task = asyncio.current_task()
            if task is not None:
                tasks.append((asyncio.get_running_loop(), task))
            return await playing

        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="convy-run") as pool:
            future = pool.submit(asyncio.run, tracked())
            try:
                return future.result()
            except KeyboardInterrupt:
                for loop, task in tasks:
                    with contextlib.suppress(RuntimeError):  # the loop closed: the run has ended
                        loop.call_soon_threadsafe(task.cancel)
                return future.result()

    async def playing(
        self, display: Display, stop: StopSignal, baseline: StoredRun | NoBaseline, provenance: Provenance
    ) -> Run:
        """The run played in the running loop, `stop` installed on its task."""
        watch = Watch(display, baseline)
        task = asyncio.current_task()
        assert task is not None
        with stop.installed(task):
            ticker = asyncio.get_running_loop().create_task(watch.ticking())
            try:
                return await self.prepared.play(provenance, watch, baseline, watch.calibrating)
            finally:
                ticker.cancel()
