"""Action: the GitHub Action's composition root — inputs and context read and checked,
the baseline found, the scenarios played, the run folder uploaded, compared, the comment posted, the
job summary and the outputs written, the exit code chosen by the gate (0 pass, 1 fail, 2
configuration error, 3 inconclusive). It assembles the stages (runner → github → baseline →
publish → run, decision 25) and holds the job's log, which only it gives out."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

import httpx

from convy.conduct.assembly import Project
from convy.conduct.session import Session
from convy.draw.untrusted import Untrusted
from convy.errors import ConfigurationError
from convy.project.shard import Slice
from convy_action.baseline.readable import Looked
from convy_action.baseline.search import Search
from convy_action.github.retries import PATIENT, Retries
from convy_action.github.services import Services
from convy_action.jobs.merge import Merge
from convy_action.jobs.played import Gated, Plays
from convy_action.jobs.rerun import Rerun
from convy_action.jobs.shards import ShardName
from convy_action.publish.ending import Ending
from convy_action.publish.shelf import ArtifactNaming
from convy_action.publish.where import Where
from convy_action.runner.checks import Checks
from convy_action.runner.context import Context
from convy_action.runner.inputs import AgentSecrets, Inputs, Masks
from convy_action.runner.log import Log
from convy_action.runner.outputs import WorkflowCommand

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
        from convy.demo.servers import DemoServers

        log = self._log
        settings = inputs.settings(flags)
        with contextlib.ExitStack() as stack:
            if settings.demo:
                demo = stack.enter_context(DemoServers())
                results = str(self._folder / settings.results)
                flags = {**demo.flags(), **flags, "results": results, "project": str(demo.project)}
                inputs = Inputs(self._argv, {**self._environ, **demo.environ()}, self._folder)
                settings = inputs.settings(flags)
            context = Context(self._environ, self._folder)
            if not settings.dry_run:
                context.check()
            event = context.event()
            project = Project(settings, inputs.sources(flags), inputs.environ)
            part = Slice.read(settings.shard)
            checks = Checks(settings, context, event)
            client = stack.enter_context(httpx.Client(timeout=30.0))
            services = Services(context, settings.github_token, client, self._retries)
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="convy-baseline-")))
            merge = Merge(project=project, context=context, services=services, scratch=scratch, log=log)
            if settings.merge:
                checks.merge(part)
                agent = "" if settings.artifact_name else merge.agent()
                prepared = None
            else:
                prepared = Session(project=project).prepared()
                agent = prepared.name
                for value in AgentSecrets(prepared.agent).values():
                    log.command(WorkflowCommand("add-mask", value))
            name = ArtifactNaming(settings.artifact_name, agent, settings.comment_key)
            name.check()
            checks.token()
            checks.otlp()
            if settings.merge and not settings.artifact_name and not agent:
                name = ArtifactNaming(merge.guessed(settings.comment_key), "")
            looked = Search(
                settings=settings,
                context=context,
                event=event,
                services=services,
                folder=self._folder,
                scratch=scratch,
                log=log,
            ).looked(name.text)
            if settings.estimate and prepared is not None:
                return self.estimated(project, looked)
            where = Where(settings=settings, context=context, event=event, services=services, log=log)
            shelf = where.shelf(ShardName(name.text, part).text)
            ending, gated = Ending(context, log), Gated(looked, settings, log)
            if prepared is not None:
                rerun = Rerun(project=project, context=context, shard=part.text, scratch=scratch, log=log)
                prepared, shelf = rerun.resumed(prepared, shelf)
            if prepared is None:
                merged = merge.merged(name.text)
                reviewed = gated.reviewed(merged.folder)
                return ending.reported(reviewed, shelf, where.box(merged.file.spec.agent, reviewed), project)
            played = Plays(context, event, looked, log)
            try:
                run = played.run(prepared)
            except (KeyboardInterrupt, asyncio.CancelledError):
                log.warning(f"interrupted: the partial run folder is {context.relative(prepared.folder)}")
                ending.told(shelf.store(prepared.folder))
                return played.exit_code()
            reviewed = gated.reviewed(run.journal.folder)
            if not part.whole:
                return ending.sharded(reviewed, shelf, part)
            return ending.reported(reviewed, shelf, where.box(prepared.name, reviewed), project)
        return EXIT_CONFIG

    def estimated(self, project: Project, looked: Looked) -> int:
        """`estimate`: the run's expected model calls, tokens and cost in the log; nothing played."""
        from convy.conduct.estimate import Estimating

        for line in Estimating(project, looked.baseline).estimate().lines():
            self._log.line(Untrusted(text=line).logged())
        return 0
