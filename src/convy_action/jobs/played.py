"""The job's run played and reviewed: the prepared run's missing attempts played against the
baseline found, with progress in the log between workflow commands switched off (agent and model
text is not trusted) and SIGTERM and Ctrl+C stopping it; then the run folder reviewed and gated
against the baseline, which is dropped with a warning when the two runs cannot be compared."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import msgspec

from convy import (
    ConfigurationError,
    NoBaseline,
    Plural,
    Prepared,
    Printed,
    Review,
    Reviewed,
    Run,
    RunInUse,
    Runs,
    RunsDiffer,
    Settings,
    Staging,
    Stop,
    Untrusted,
)
from convy_action.baseline.readable import Looked
from convy_action.runner.context import Context, WorkflowEvent
from convy_action.runner.log import Log


class Plays(msgspec.Struct, frozen=True):
    """Runs played in the runner's `context` for the `event`, against the baseline `looked` found,
    their progress shown in the job's `log`."""

    context: Context
    event: WorkflowEvent
    looked: Looked
    log: Log
    stops: list[Stop] = msgspec.field(default_factory=list)
    """The signals' handlers of the runs played: which signal stopped one, for the exit code."""

    def exit_code(self) -> int:
        """How an interrupted job exits: 128 + the signal's number (130 Ctrl+C, 143 SIGTERM)."""
        return self.stops[0].exit_code if self.stops else 128 + signal.SIGINT

    def run(self, prepared: Prepared) -> Run:
        """The `prepared` run played (its missing attempts); ConfigurationError when its folder is
        in use by another process."""
        log, context, event, looked = self.log, self.context, self.event, self.looked

        shown: list[Printed] = []

        def watch(run: Run, missing: int) -> Printed:
            # while stages may add attempts, the progress line says how many at most
            most = Staging(run.spec).left(run.journal.outcomes()) if run.staged(looked.baseline) else 0
            if shown:
                log.line(f"convy: {Plural(missing, 'more attempt').text()} where the comparison is unclear")
                shown[0].more(missing, most)
                return shown[0]
            log.line(
                f"convy: {Plural(missing, 'attempt').text()} of {len(run.spec.expected())} to play against "
                f"{Untrusted(text=run.spec.agent).console(200)!r} → {context.relative(run.journal.folder)}"
            )
            shown.append(Printed(missing, log.out, False, most))
            return shown[0]

        async def play() -> Run:
            task = asyncio.current_task()
            if task is None:
                return await prepared.play(context.provenance(event), watch, looked.baseline)
            stop = Stop(task)
            self.stops.append(stop)
            with stop.installed():
                return await prepared.play(context.provenance(event), watch, looked.baseline)

        with log.untrusted():
            try:
                return asyncio.run(play())
            except RunInUse as error:
                raise ConfigurationError("run", str(error)) from None


class Gated(msgspec.Struct, frozen=True):
    """Run folders reviewed against the baseline `looked` found, gated as `settings` say; a warning
    in the job's `log` when the baseline is not comparable."""

    looked: Looked
    settings: Settings
    log: Log

    def reviewed(self, folder: Path) -> Reviewed:
        looked, settings = self.looked, self.settings
        stored = Runs(folder.parent).one(folder)
        try:
            return Review.gated(stored, looked.baseline, settings).reviewed()
        except RunsDiffer as error:
            self.log.warning(f"baseline {looked.source} is not comparable: {error}")
            return Review.gated(stored, NoBaseline(why=str(error)), settings).reviewed()
