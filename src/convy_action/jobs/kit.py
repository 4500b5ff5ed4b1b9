"""What every job of the action works with, assembled once: the settings, the runner's context and
event, the project, GitHub's services, the folders and the log, and the steps each job takes alike
(the artifact named and checked, the baseline looked for, the shelf and the box chosen)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from convy import Opened, Project, Slice
from convy_action.baseline.readable import Looked
from convy_action.baseline.search import Search
from convy_action.github.services import Services
from convy_action.publish.ending import Ending
from convy_action.publish.shelf import ArtifactNaming
from convy_action.publish.where import Where
from convy_action.runner.checks import Checks
from convy_action.runner.context import Context, WorkflowEvent
from convy_action.runner.log import Log
from convy_action.runner.settings import ActionSettings


class Kit(msgspec.Struct, frozen=True, kw_only=True):
    """One job's `settings`, the runner's `context` and the `event` that started the workflow, the
    project `opened`, GitHub's `services`, the workspace `folder`, a `scratch` folder and the job's `log`."""

    settings: ActionSettings
    context: Context
    event: WorkflowEvent
    opened: Opened
    """The project read by the engine's use case (the demo's servers running for a demo run)."""
    services: Services
    folder: Path
    scratch: Path
    log: Log

    @property
    def project(self) -> Project:
        return self.opened.project

    @property
    def part(self) -> Slice:
        """The shard this job plays (the whole run unless `shard` is set)."""
        return Slice.read(self.settings.shard)

    def checks(self) -> Checks:
        return Checks(self.settings, self.context, self.event)

    def named(self, agent: str) -> ArtifactNaming:
        """The run folder's artifact for `agent`, checked, and what must hold before GitHub is
        asked (a token, the otlp settings): ConfigurationError before anything is spent."""
        settings = self.settings
        name = ArtifactNaming(settings.artifact_name, agent, settings.comment_key)
        name.check()
        checks = self.checks()
        checks.token()
        checks.otlp()
        return name

    def looked(self, name: ArtifactNaming) -> Looked:
        """The baseline the `baseline` setting names, for the artifact `name`."""
        search = Search(
            self.settings, self.context, self.event, self.services, self.folder, self.scratch, self.log
        )
        return search.looked(name.text)

    def where(self) -> Where:
        """Where the run folder and the comment go."""
        return Where(self.settings, self.context, self.event, self.services, self.log)

    def ending(self) -> Ending:
        return Ending(self.context, self.log, self.settings, self.project.root)
