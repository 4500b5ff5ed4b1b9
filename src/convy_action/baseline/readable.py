"""A candidate baseline read back and judged fit to serve: a run folder readable, finished and with
at least half of its attempts readable, its skipped lines kept as notes; an artifact of a workflow
run fetched and unpacked; and what a search found — the run, or convy's NoBaseline saying why, with
notes for the log."""

from __future__ import annotations

import tempfile
from pathlib import Path

import msgspec

from convy import NewerFormat, NoBaseline, StoredRun
from convy.runs import Runs
from convy_action.errors import ActionError
from convy_action.github.rest import Artifact, GitHub, GitHubError
from convy_action.github.zipped import Archive, UnsafeArchive


class Looked(msgspec.Struct, frozen=True, kw_only=True):
    """What a baseline search found: the run, or NoBaseline with the reason; `source` names it for
    people; `notes` are the candidates skipped on the way, and why."""

    baseline: StoredRun | NoBaseline
    source: str = ""
    notes: tuple[str, ...] = ()


class Unusable(ActionError):
    """A candidate's artifact that cannot serve as a baseline; the message says why."""


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
        spec = run.file.spec
        # a staged run plays at least one attempt of each scenario, often no more (decision 28)
        declared = len(spec.scenarios) if spec.stages else len(spec.expected())
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
