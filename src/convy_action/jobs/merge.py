"""The merge job's run (`merge: true`, decision 14): the agent its project names when it is known,
else the one run whose shards this workflow run holds, and every shard's artifact fetched
(shards.py) and merged into a new run folder of the results."""

from __future__ import annotations

from pathlib import Path

import msgspec

from convy import ConfigurationError, Project, StoredRun
from convy.runs import Marker, RunId
from convy_action.github.services import Services
from convy_action.jobs.shards import RestShelves, RunnerShelves, ShardArtifacts, Shelves
from convy_action.runner.context import Context
from convy_action.runner.log import Log


class Merge(msgspec.Struct, frozen=True, kw_only=True):
    """The merge of this workflow run's shards for `project`, in the runner's `context`, through
    GitHub's `services`, fetched into `scratch`, told in the job's `log`."""

    project: Project
    context: Context
    services: Services
    scratch: Path
    log: Log

    def agent(self) -> str:
        """The project's agent, or "" when the merge job's project does not say (not checked out)."""
        try:
            return self.project.agent_name()
        except ConfigurationError:
            return ""

    def guessed(self, comment_key: str) -> str:
        """The artifact name of the one run whose shards this workflow run holds (ending in the
        comment key when one is given), for a project that names no agent."""
        key = Marker(agent="").safe(comment_key)
        found = self.artifacts("").guessed(key)
        self.log.line(f"convy: the project names no agent; merging the shards of {found}")
        return found

    def merged(self, name: str) -> StoredRun:
        """Every shard's artifact of this workflow run, fetched and merged into a new run folder."""
        shards = self.artifacts(name).shards()
        agent = shards.runs[0].file.spec.agent
        folder = self.project.results / agent / RunId.new().text
        merged = shards.merged(folder)
        self.log.line(
            f"convy: merged {len(shards.runs)} shards ({', '.join(shards.names)}) into "
            f"{self.context.relative(folder)} ({merged.file.status})"
        )
        return merged

    def artifacts(self, name: str) -> ShardArtifacts:
        """The shards' artifacts of this workflow run: from the results service, else the REST API."""
        shelves: tuple[Shelves, ...] = (RunnerShelves(self.services.results()),)
        github = self.services.rest()
        if github is not None:
            shelves += (RestShelves(github, self.context.run_id),)
        return ShardArtifacts(shelves, name, self.scratch / "shards")
