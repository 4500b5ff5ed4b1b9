"""Looking for the baseline this job is compared with, as the `baseline` setting asks (wanted.py),
before anything is played: the candidates skipped on the way are warned of in the job's log, and the
log says which baseline was found, or why none."""

from __future__ import annotations

from pathlib import Path

import msgspec

from convy import NoBaseline
from convy_action.baseline.readable import Looked
from convy_action.baseline.wanted import Wanted
from convy_action.github.services import Services
from convy_action.runner.context import Context, WorkflowEvent
from convy_action.runner.log import Log
from convy_action.runner.settings import ActionSettings


class Search(msgspec.Struct, frozen=True):
    """The job's `settings`, the runner's `context` and `event`, GitHub's `services`, the working
    `folder` (a dry run's baseline folder is relative to it), a `scratch` folder for downloads, and
    the job's `log`."""

    settings: ActionSettings
    context: Context
    event: WorkflowEvent
    services: Services
    folder: Path
    scratch: Path
    log: Log

    def looked(self, name: str) -> Looked:
        """The baseline of the run whose artifact is `name`; ConfigurationError when the setting
        cannot be followed."""
        settings, context = self.settings, self.context
        looked = (
            Wanted(
                value=settings.baseline,
                dry_run=settings.dry_run,
                folder=self.folder,
                github=self.services.rest(),
                workflow=context.workflow,
                branch=context.baseline_branch(settings.baseline_branch, self.event),
                name=name,
                current=context.run_id,
                scratch=self.scratch,
            )
            .baseline()
            .looked()
        )
        for note in looked.notes:
            self.log.warning(f"baseline: {note}")
        self.log.line(f"convy: baseline: {looked.source or self.why(looked)}")
        return looked

    def why(self, looked: Looked) -> str:
        match looked.baseline:
            case NoBaseline(why=why):
                return f"none ({why})"
            case _:
                return "found"
