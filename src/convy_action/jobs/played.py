"""The job's run played and reviewed through the engine's use case: its progress in the log between
workflow commands switched off (agent and model text is not trusted), SIGTERM and Ctrl+C stopping
it; then the run folder reviewed and gated against the baseline, which is dropped with a warning
when the two runs cannot be compared."""

from __future__ import annotations

from pathlib import Path

import msgspec

from convy import NoBaseline, Opened, Printed, Ready, Reviewed, RunsDiffer, Signals
from convy.tools import Startup
from convy_action.baseline.readable import Looked
from convy_action.runner.context import Context, WorkflowEvent
from convy_action.runner.log import Log


class Logged:
    """A run's progress in the job's `log`, its folder named relative to the workspace (`context`)."""

    def __init__(self, log: Log, context: Context) -> None:
        self._log = log
        self._context = context

    def said(self, line: str) -> None:
        self._log.line(line)

    def named(self, folder: Path) -> str:
        return str(self._context.relative(folder))

    def printed(self, total: int, most: int) -> Printed:
        return Printed(total, self._log.out, False, most)


class Gated(msgspec.Struct, frozen=True):
    """Run folders reviewed against the baseline `looked` found, gated as the project `opened`'s
    settings say; a warning in the job's `log` when the baseline is not comparable."""

    looked: Looked
    opened: Opened
    log: Log

    def played(self, ready: Ready, context: Context, event: WorkflowEvent) -> Reviewed:
        """The `ready` run played in the runner's `context` for the `event` (Interrupted when a
        signal stops it), then reviewed."""
        display, provenance = Logged(self.log, context), context.provenance(event)
        Startup().settled()
        try:
            with self.log.untrusted():
                return ready.played(display, Signals(), self.looked.baseline, provenance)
        except RunsDiffer as error:
            return self.dropped(ready.folder, error)

    def reviewed(self, folder: Path) -> Reviewed:
        try:
            return self.opened.reviewed(folder, self.looked.baseline)
        except RunsDiffer as error:
            return self.dropped(folder, error)

    def dropped(self, folder: Path, error: RunsDiffer) -> Reviewed:
        self.log.warning(f"baseline {self.looked.source} is not comparable: {error}")
        return self.opened.reviewed(folder, NoBaseline(why=str(error)))
