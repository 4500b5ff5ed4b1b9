"""The baseline a run is compared with: AutoBaseline (the newest earlier run of this workflow on the
baseline branch with an unexpired artifact whose run folder finished), RunBaseline (a workflow run
named by its id), LocalBaseline (a run folder on disk, for dry runs) and NoneWanted. Each gives a
Looked: the run read back, or convy's NoBaseline saying why, with notes for the log."""

from __future__ import annotations

import tempfile
from datetime import datetime
from pathlib import Path
from typing import Protocol

import msgspec

from convy.compare.comparison import NoBaseline
from convy.errors import ConfigurationError
from convy.store.journal import NewerFormat
from convy.store.runs import Runs, StoredRun
from convy_action.github import Artifact, GitHub, GitHubError, WorkflowRun
from convy_action.zipped import Archive, UnsafeArchive

CANDIDATES = 30
"""How many earlier runs `auto` looks into at most (one request each)."""


class Looked(msgspec.Struct, frozen=True, kw_only=True):
    """What a baseline search found: the run, or NoBaseline with the reason; `source` names it for
    people; `notes` are the candidates skipped on the way, and why."""

    baseline: StoredRun | NoBaseline
    source: str = ""
    notes: tuple[str, ...] = ()


class Unusable(Exception):
    """A candidate's artifact that cannot serve as a baseline; the message says why."""


class Baseline(Protocol):
    def looked(self) -> Looked: ...


class NoneWanted(msgspec.Struct, frozen=True):
    """No baseline, as asked (`baseline: none`) or because none can be looked for."""

    why: str

    def looked(self) -> Looked:
        return Looked(baseline=NoBaseline(why=self.why))


class LocalBaseline(msgspec.Struct, frozen=True):
    """A run folder on disk (dry runs): ConfigurationError when it cannot serve."""

    folder: Path

    def looked(self) -> Looked:
        try:
            run = Readable(self.folder).run()
        except Unusable as error:
            raise ConfigurationError("baseline", f"{self.folder}: {error}") from None
        return Looked(baseline=run, source=str(self.folder), notes=Damaged(run).notes())


class Readable(msgspec.Struct, frozen=True):
    """A run folder that must serve as a baseline: readable, of a format this code reads, finished,
    and at least half of its declared attempts readable (lines skipped are noted, see Damaged)."""

    folder: Path

    def run(self) -> StoredRun:
        try:
            run = Runs(self.folder.parent).one(self.folder)
        except NewerFormat as error:
            raise Unusable(str(error).removeprefix(f"{self.folder}: ")) from None
        except (ValueError, OSError, msgspec.DecodeError, msgspec.ValidationError):
            raise Unusable("it is not a readable run folder (run.json)") from None
        if run.file.status != "finished":
            raise Unusable(f"its run did not finish (status {run.file.status})")
        try:
            readable = run.readable()
        except (ValueError, OSError):
            raise Unusable("its attempts.jsonl cannot be read") from None
        declared = len(run.file.spec.expected())
        if readable * 2 < declared:
            raise Unusable(
                f"only {readable} of its {declared} attempts can be read (at least half are needed)"
            )
        return run


class Damaged(msgspec.Struct, frozen=True):
    """A baseline's attempt lines that were skipped, as notes for the log (the first five)."""

    run: StoredRun

    def notes(self) -> tuple[str, ...]:
        damage = self.run.damage()
        notes = [f"{self.run.folder.name}: {d.text()}" for d in damage[:5]]
        if len(damage) > 5:
            notes.append(f"{len(damage) - 5} more attempt lines of the baseline skipped")
        return tuple(notes)


class Downloaded(msgspec.Struct, frozen=True):
    """An artifact of a run, fetched into a new folder under `scratch` and read back."""

    github: GitHub
    artifact: Artifact
    scratch: Path

    def run(self) -> StoredRun:
        self.scratch.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix=f"baseline-{self.artifact.id}-", dir=self.scratch))
        archive = folder.with_suffix(".zip")
        try:
            self.github.download(self.artifact.id, archive)
            Archive(archive).run_folder().unpack(folder / "run")
        except UnsafeArchive as error:
            raise Unusable(f"its artifact is refused: {error.reason}") from None
        except GitHubError as error:
            if error.status in (404, 410):
                raise Unusable("its artifact has expired or is gone") from None
            raise
        finally:
            archive.unlink(missing_ok=True)
        return Readable(folder / "run").run()


class RunBaseline(msgspec.Struct, frozen=True):
    """The artifact `name` of the workflow run `run_id`, named explicitly: anything wrong with it is
    a ConfigurationError (exit 2), found before the run plays."""

    github: GitHub
    run_id: int
    name: str
    scratch: Path

    def looked(self) -> Looked:
        where = "baseline"
        try:
            run = self.github.run(self.run_id)
            named = Named(artifacts=self.github.artifacts(run.id, self.name), name=self.name)
        except GitHubError as error:
            if error.status == 404:
                raise ConfigurationError(where, f"workflow run {self.run_id} does not exist") from None
            raise ConfigurationError(where, f"workflow run {self.run_id} cannot be read: {error}") from None
        live = named.live()
        if not live:
            state = "has expired" if named.found() else "does not exist"
            raise ConfigurationError(where, f"the artifact {self.name!r} of run {self.run_id} {state}")
        try:
            stored = Downloaded(self.github, live[0], self.scratch).run()
        except (Unusable, GitHubError) as error:
            raise ConfigurationError(where, f"run {self.run_id}: {error}") from None
        return Looked(baseline=stored, source=f"workflow run {self.run_id}", notes=Damaged(stored).notes())


class AutoBaseline(msgspec.Struct, frozen=True, kw_only=True):
    """The newest run of `workflow` on `branch`, created before the current run `current`, not from
    a fork, with an unexpired artifact `name` whose run folder finished. A candidate that fails
    (expired, interrupted, newer format, refused zip) is skipped with a note; GitHub refusing the
    search gives no baseline, with the reason."""

    github: GitHub
    workflow: str
    branch: str
    name: str
    current: int
    scratch: Path

    def looked(self) -> Looked:
        notes: list[str] = []
        try:
            before = self.started()
            runs = self.github.runs(self.workflow, branch=self.branch, pages=2)
        except GitHubError as error:
            hint = " (the job needs `permissions: actions: read`)" if error.status in (401, 403, 404) else ""
            return Looked(
                baseline=NoBaseline(why=f"the baseline search failed ({error})"),
                notes=(f"the search failed: {error}{hint}",),
            )
        candidates = [
            r
            for r in runs
            if r.id != self.current
            and (before is None or r.created_at < before)
            and (r.head_repository is None or r.repository is None or r.head_repository.id == r.repository.id)
        ]
        for run in candidates[:CANDIDATES]:
            try:
                stored = self.tried(run)
            except Unusable as error:
                notes.append(f"skipped workflow run {run.id}: {error}")
                continue
            except GitHubError as error:
                notes.append(f"stopped looking at workflow run {run.id}: {error}")
                break
            if stored is not None:
                notes.extend(Damaged(stored).notes())
                return Looked(baseline=stored, source=f"workflow run {run.id}", notes=tuple(notes))
        why = f"no earlier run of {self.workflow} on {self.branch} has a usable artifact {self.name!r}"
        return Looked(baseline=NoBaseline(why=why), notes=tuple(notes))

    def started(self) -> datetime | None:
        """When the current run was created; None when it cannot be told (every other run counts)."""
        if not self.current:
            return None
        try:
            return self.github.run(self.current).created_at
        except GitHubError as error:
            if error.status == 404:
                return None
            raise

    def tried(self, run: WorkflowRun) -> StoredRun | None:
        """The run's baseline; None when it has no artifact of that name (not worth a note)."""
        named = Named(artifacts=self.github.artifacts(run.id, self.name), name=self.name)
        live = named.live()
        if named.found() and not live:
            raise Unusable(f"its artifact {self.name!r} has expired")
        if not live:
            return None
        return Downloaded(self.github, live[0], self.scratch).run()


class Wanted(msgspec.Struct, frozen=True, kw_only=True):
    """The `baseline` setting (`auto`, `none`, a workflow run id, or in dry runs a run folder relative
    to `folder`) and what following it takes: GitHub (None without a repository or token), the
    workflow file and branch `auto` searches, the artifact's name, the current run, a scratch folder."""

    value: str
    dry_run: bool
    folder: Path
    github: GitHub | None
    workflow: str
    branch: str
    name: str
    current: int
    scratch: Path

    def baseline(self) -> Baseline:
        """The search the setting asks for; ConfigurationError when it cannot be followed."""
        wanted = self.value.strip()
        if wanted == "none":
            return NoneWanted("none was wanted (baseline: none)")
        if wanted.isdigit():
            if self.github is None:
                raise ConfigurationError(
                    "baseline", "a workflow run id needs GITHUB_REPOSITORY and github-token to be found"
                )
            return RunBaseline(self.github, int(wanted), self.name, self.scratch)
        if wanted != "auto":
            if not self.dry_run:
                raise ConfigurationError(
                    "baseline", "must be auto, none or a workflow run id (a run folder only with --dry-run)"
                )
            return LocalBaseline(self.folder / wanted)
        if self.github is None:
            return NoneWanted("a dry run without GITHUB_REPOSITORY and github-token searches none")
        if not self.workflow:
            return NoneWanted("GITHUB_WORKFLOW_REF names no workflow to search")
        if not self.branch:
            return NoneWanted("no baseline branch is known: set baseline-branch")
        return AutoBaseline(
            github=self.github,
            workflow=self.workflow,
            branch=self.branch,
            name=self.name,
            current=self.current,
            scratch=self.scratch,
        )


class Named(msgspec.Struct, frozen=True, kw_only=True):
    """A run's artifacts as listed, and the name the baseline's has."""

    artifacts: tuple[Artifact, ...]
    name: str

    def found(self) -> tuple[Artifact, ...]:
        return tuple(a for a in self.artifacts if a.name == self.name)

    def live(self) -> tuple[Artifact, ...]:
        """The unexpired ones, newest first."""
        return tuple(
            sorted(
                (a for a in self.found() if not a.expired),
                key=lambda a: (a.created_at.timestamp() if a.created_at is not None else 0.0, a.id),
                reverse=True,
            )
        )
