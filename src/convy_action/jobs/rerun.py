"""What a re-run of a workflow run (GITHUB_RUN_ATTEMPT > 1) resumes instead of playing everything
again, and that run prepared to be resumed, with its shelf to replace the earlier artifact.

It resumes a partial run folder of the same workflow run left in the workspace (a self-hosted runner
keeps it), else the run's own artifact from an earlier attempt when it holds an unfinished run
(downloaded and unpacked into the results folder; the upload then replaces it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec

from convy import NewerFormat, Opened, Ready
from convy.runs import RunId, RunJournal
from convy_action.github.artifacts import ArtifactError, ResultsService
from convy_action.github.zipped import Archive, UnsafeArchive
from convy_action.publish.shelf import ArtifactShelf, Shelf
from convy_action.runner.context import Context
from convy_action.runner.log import Log


class Resumable(msgspec.Struct, frozen=True, kw_only=True):
    """The folder to resume (None: play a new run), where it came from, and notes for the log."""

    folder: Path | None = None
    source: str = ""
    notes: tuple[str, ...] = ()


class Earlier(msgspec.Struct, frozen=True, kw_only=True):
    """The unfinished run of workflow run `run` (its id) for `agent` and `shard` (its text, `k/n`;
    empty: the whole run): under `results` (the agent's folder of run folders), else the artifact
    `name` of the run fetched through `service` (None when there is no results service, e.g. a dry
    run) into `scratch`."""

    results: Path
    run: str
    agent: str
    shard: str
    name: str
    service: ResultsService | None
    scratch: Path

    def found(self) -> Resumable:
        notes: list[str] = []
        for folder in sorted(self.results.glob("*/run.json"), reverse=True):
            if self.unfinished(folder.parent, notes):
                return Resumable(
                    folder=folder.parent,
                    source="the partial run folder this workflow run left in the workspace",
                    notes=tuple(notes),
                )
        if self.service is None:
            return Resumable(notes=tuple(notes))
        return self.downloaded(self.service, notes)

    def unfinished(self, folder: Path, notes: list[str]) -> bool:
        """Whether `folder` holds an unfinished run of this workflow run and agent."""
        try:
            header = RunJournal(folder).header()
        except (NewerFormat, ValueError) as error:
            notes.append(f"{folder.name} is not resumed: {error}")
            return False
        spec = header.spec
        ours = spec.provenance.workflow_run == self.run and spec.agent == self.agent
        return ours and spec.shard.text == self.shard and header.status != "finished"

    def downloaded(self, service: ResultsService, notes: list[str]) -> Resumable:
        """The artifact of an earlier attempt, unpacked into a new folder under `results` when it
        holds an unfinished run of this workflow run."""
        try:
            if not any(listed.name == self.name for listed in service.listed()):
                return Resumable(notes=tuple(notes))
            self.scratch.mkdir(parents=True, exist_ok=True)
            archive = self.scratch / "earlier.zip"
            service.fetch(self.name, archive)
        except ArtifactError as error:
            notes.append(f"the artifact {self.name!r} of an earlier attempt could not be fetched: {error}")
            return Resumable(notes=tuple(notes))
        folder = self.results / RunId.new().text
        try:
            Archive(archive).run_folder().unpack(folder)
        except UnsafeArchive as error:
            notes.append(f"the artifact {self.name!r} of an earlier attempt is refused: {error.reason}")
            return Resumable(notes=tuple(notes))
        finally:
            archive.unlink(missing_ok=True)
        if self.unfinished(folder, notes):
            return Resumable(
                folder=folder,
                source=f"the unfinished run of artifact {self.name!r}, uploaded by an earlier attempt",
                notes=tuple(notes),
            )
        shutil.rmtree(folder, ignore_errors=True)
        notes.append(
            f"the artifact {self.name!r} of an earlier attempt holds a finished run (or another's): "
            "this attempt plays a new one"
        )
        return Resumable(notes=tuple(notes))


class Rerun(msgspec.Struct, frozen=True, kw_only=True):
    """A re-run of this workflow run (GITHUB_RUN_ATTEMPT > 1) in the runner's `context`: the
    project `opened` played, its `shard` (`k/n`; empty: the whole run), a `scratch` folder, the
    job's `log`."""

    opened: Opened
    context: Context
    shard: str
    scratch: Path
    log: Log

    def resumed(self, ready: Ready, shelf: Shelf) -> tuple[Ready, Shelf]:
        """On a re-run (GITHUB_RUN_ATTEMPT > 1), the unfinished run of this workflow run — a partial
        folder in the workspace, else the artifact an earlier attempt uploaded — prepared to be
        resumed (only its missing attempts are played), and a shelf that replaces the artifact."""
        context = self.context
        if context.run_attempt <= 1 or not context.run_id:
            return ready, shelf
        earlier = Earlier(
            results=ready.folder.parent,
            run=str(context.run_id),
            agent=ready.name,
            shard=self.shard,
            name=shelf.name if isinstance(shelf, ArtifactShelf) else "",
            service=shelf.service if isinstance(shelf, ArtifactShelf) else None,
            scratch=self.scratch / "earlier",
        )
        found = earlier.found()
        for note in found.notes:
            self.log.warning(f"re-run: {note}")
        if found.folder is None:
            return ready, shelf
        self.log.line(
            f"convy: attempt {context.run_attempt} of this workflow run resumes {found.source}: "
            f"{context.relative(found.folder)}"
        )
        resumed = self.opened.prepared(found.folder)
        return resumed, shelf.replacing() if isinstance(shelf, ArtifactShelf) else shelf
