"""The GitHub Action's composition root: the inputs read and their secrets masked first, the stages
assembled into the job's kit (runner → github → baseline → publish → jobs, decision 25), the job its
settings ask for chosen once and done, and a configuration error turned into exit 2. It holds the
job's log, which only it gives out."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

import httpx

from convy import ConfigurationError, Plan
from convy.tools import Untrusted
from convy_action.github.retries import PATIENT, Retries
from convy_action.github.services import Services
from convy_action.jobs.job import Jobs
from convy_action.jobs.kit import Kit
from convy_action.runner.context import Context
from convy_action.runner.inputs import Inputs, Masks
from convy_action.runner.log import Log
from convy_action.runner.outputs import WorkflowCommand
from convy_action.runner.settings import ActionSettings
from convy_action.runner.summary import JobSummary

EXIT_CONFIG = 2


class Action:
    """One invocation of the action: arguments, environment, log stream, working folder, and the
    retries of its requests to GitHub."""

    def __init__(
        self,
        argv: Sequence[str],
        environ: Mapping[str, str],
        out: TextIO,
        folder: Path,
        retries: Retries = PATIENT,
    ) -> None:
        self._argv = tuple(argv)
        self._environ = dict(environ)
        self._log = Log(out, environ.get("GITHUB_ACTIONS") == "true")
        self._folder = folder
        self._retries = retries

    def exit_code(self) -> int:
        inputs = Inputs(self._argv, self._environ, self._folder)
        refused: ConfigurationError | None = None
        try:
            flags = inputs.flags()
        except ConfigurationError as error:
            flags, refused = {}, error
        for value in Masks(flags, self._environ).values():
            self._log.command(WorkflowCommand("add-mask", value))
        try:
            if refused is not None:
                raise refused
            return self.acted(inputs, flags)
        except ConfigurationError as error:
            shown = Untrusted(text=str(error)).logged()
            self._log.command(WorkflowCommand("error", shown, (("title", "convy: configuration error"),)))
            return EXIT_CONFIG

    def acted(self, inputs: Inputs, flags: dict[str, object]) -> int:
        """The job the settings ask for, assembled and done; `--demo` plays against the demo's
        servers, started for the job."""
        given = inputs.settings(flags)
        plan = Plan(
            folder=self._folder,
            flags=flags,
            environ=inputs.environ,
            kind=ActionSettings,
            demo=given.demo,
            results=str(given.results),
        )
        with plan.opened() as opened, contextlib.ExitStack() as stack:
            settings = opened.settings(ActionSettings)
            context = Context(self._environ, self._folder)
            self.strays(inputs.sources(flags).strays(ActionSettings), context)
            if not settings.dry_run:
                context.check()
            client = stack.enter_context(httpx.Client(timeout=30.0))
            kit = Kit(
                settings=settings,
                context=context,
                event=context.event(),
                opened=opened,
                services=Services(context, settings.github_token, client, self._retries),
                folder=self._folder,
                scratch=Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="convy-baseline-"))),
                log=self._log,
            )
            return Jobs(kit).chosen().exit_code()

    def strays(self, said: tuple[str, ...], context: Context) -> None:
        """Each `CONVY_*` variable that names no setting, warned about in the log and the step's
        summary (a misspelt one would otherwise be ignored without a word)."""
        for stray in said:
            self._log.warning(stray)
        if said and context.step_summary:
            JobSummary(Path(context.step_summary)).append("\n".join(f"- **Warning:** {s}" for s in said))
