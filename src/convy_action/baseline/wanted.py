"""The baselines a run may be compared with, and the choice among them as the `baseline` setting
asks: the newest earlier run of this workflow on the baseline branch with an unexpired artifact
whose run folder finished (`auto`), a workflow run named by its id, a run folder on disk (for dry
runs), or none.

Each gives what it found (readable.py): the run read back, or convy's NoBaseline saying why, with
notes for the log."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Protocol

import msgspec

from convy import ConfigurationError, NoBaseline, StoredRun
from convy_action.baseline.readable import Damaged, Downloaded, Looked, Named, Readable, Unusable
from convy_action.github.rest import GitHub, GitHubError, WorkflowRun

CANDIDATES = 30
"""How many earlier runs `auto` looks into at most (one request each)."""


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
