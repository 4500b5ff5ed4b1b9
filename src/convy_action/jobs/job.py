"""The jobs the action can do, chosen once from its settings, each with its own exit code: play a
run (or one shard of it), estimate one without playing, or merge the shards of this workflow run
(decision 8: one object each, not a mode switched on along the way)."""

from __future__ import annotations

from typing import Protocol

import msgspec

from convy import Interrupted, Ready, Reviewed
from convy_action.jobs.kit import Kit
from convy_action.jobs.merge import Merge
from convy_action.jobs.played import Gated
from convy_action.jobs.rerun import Rerun
from convy_action.jobs.shards import ShardName
from convy_action.publish.shelf import ArtifactNaming, Shelf
from convy_action.publish.where import Where
from convy_action.runner.inputs import AgentSecrets
from convy_action.runner.outputs import WorkflowCommand


class Job(Protocol):
    """What one invocation of the action does."""

    def exit_code(self) -> int:
        """Do it: 0 pass, 1 fail, 2 configuration error, 3 inconclusive, 128 + n stopped by signal n."""
        ...


class WholeRun(msgspec.Struct, frozen=True):
    """A run's missing attempts played, reviewed against the baseline, shelved, commented and gated
    (on a re-run, the unfinished run of an earlier attempt resumed)."""

    kit: Kit
    ready: Ready

    def exit_code(self) -> int:
        kit, ready = self.kit, self.ready
        name = kit.named(ready.name)
        looked = kit.looked(name)
        where = kit.where()
        shelf = where.shelf(ShardName(name.text, kit.part).text)
        rerun = Rerun(
            opened=kit.opened, context=kit.context, shard=kit.part.text, scratch=kit.scratch, log=kit.log
        )
        ready, shelf = rerun.resumed(ready, shelf)
        try:
            reviewed = Gated(looked, kit.opened, kit.log).played(ready, kit.context, kit.event)
        except Interrupted as stopped:
            kit.log.warning(f"interrupted: the partial run folder is {kit.context.relative(stopped.folder)}")
            kit.ending().told(shelf.store(stopped.folder))
            return stopped.exit_code
        return self.ended(reviewed, shelf, where, ready)

    def ended(self, reviewed: Reviewed, shelf: Shelf, where: Where, ready: Ready) -> int:
        return self.kit.ending().reported(reviewed, shelf, where.box(ready.name, reviewed))


class ShardRun(WholeRun, frozen=True):
    """One shard of a run (`shard: k/n`) played like a whole run, but ended as a shard: its folder
    shelved and its own comparison in the log, no comment and no gate (the merge job's)."""

    def ended(self, reviewed: Reviewed, shelf: Shelf, where: Where, ready: Ready) -> int:
        return self.kit.ending().sharded(reviewed, shelf, self.kit.part)


class EstimateJob(msgspec.Struct, frozen=True):
    """`estimate`: the run's expected model calls, tokens and cost from the baseline in the log;
    nothing played."""

    kit: Kit
    ready: Ready

    def exit_code(self) -> int:
        from convy.tools import Untrusted

        kit = self.kit
        looked = kit.looked(kit.named(self.ready.name))
        for line in kit.opened.estimate(looked.baseline).lines():
            kit.log.line(Untrusted(text=line).logged())
        return 0


class MergeJob(msgspec.Struct, frozen=True):
    """`merge`: every shard's artifact of this workflow run merged into one run, shelved, compared,
    commented and gated."""

    kit: Kit

    def exit_code(self) -> int:
        kit, settings = self.kit, self.kit.settings
        kit.checks().merge(kit.part)
        merge = Merge(
            project=kit.project, context=kit.context, services=kit.services, scratch=kit.scratch, log=kit.log
        )
        agent = "" if settings.artifact_name else merge.agent()
        name = kit.named(agent)
        if not settings.artifact_name and not agent:
            name = ArtifactNaming(merge.guessed(settings.comment_key), "")
        looked = kit.looked(name)
        where = kit.where()
        shelf = where.shelf(ShardName(name.text, kit.part).text)
        merged = merge.merged(name.text)
        reviewed = Gated(looked, kit.opened, kit.log).reviewed(merged.folder)
        return kit.ending().reported(reviewed, shelf, where.box(merged.file.spec.agent, reviewed))


class Jobs(msgspec.Struct, frozen=True):
    """The job the `kit`'s settings ask for: a merge; else the run prepared (everything checked
    before any request, the agent's secrets masked in the log), then estimated, or played whole or
    as one shard."""

    kit: Kit

    def chosen(self) -> Job:
        kit = self.kit
        if kit.settings.merge:
            return MergeJob(kit)
        ready = kit.opened.prepared()
        for value in AgentSecrets(ready).values():
            kit.log.command(WorkflowCommand("add-mask", value))
        if kit.settings.estimate:
            return EstimateJob(kit, ready)
        if not kit.part.whole:
            return ShardRun(kit, ready)
        return WholeRun(kit, ready)
