"""The shards of one run in one workflow run (decision 14): the artifact a shard job uploads
(`<artifact-name>-shard-<k>-of-<n>`), and every shard's artifact of the current workflow run fetched
and read back as convy's Shards, ready to merge.

They are fetched through the results service (the runtime token suffices, so a fork's pull request
merges too) or, where the service does not list them, through the REST API."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

import msgspec

from convy import ConfigurationError, NewerFormat, Slice, StoredRun
from convy.runs import MERGED as WHERE
from convy.runs import Runs, Shards
from convy_action.github.artifacts import ArtifactError, ListedArtifact, ResultsService
from convy_action.github.rest import GitHub, GitHubError
from convy_action.github.zipped import Archive, UnsafeArchive

SHARDED = re.compile(r"(.+)-shard-(\d+)-of-(\d+)")
"""A shard's artifact name: the run's artifact name, the shard, the count."""


class ShardName(msgspec.Struct, frozen=True):
    """The artifact of shard `part` of the run whose artifact is `base`."""

    base: str
    part: Slice

    @property
    def text(self) -> str:
        return f"{self.base}-shard-{self.part.index}-of-{self.part.count}" if self.part.count else self.base


class Shelves(Protocol):
    """Where the current workflow run's artifacts are listed and fetched from."""

    def listed(self) -> tuple[ListedArtifact, ...]: ...

    def fetch(self, artifact: ListedArtifact, to: Path) -> int: ...


class RunnerShelves(msgspec.Struct, frozen=True):
    """The results service, asked with the runner's ACTIONS_RUNTIME_TOKEN (as download-artifact
    does): no GitHub token or permission needed."""

    service: ResultsService

    def listed(self) -> tuple[ListedArtifact, ...]:
        return self.service.listed()

    def fetch(self, artifact: ListedArtifact, to: Path) -> int:
        return self.service.fetch(artifact.name, to)


class RestShelves(msgspec.Struct, frozen=True):
    """The REST API's artifacts of workflow run `run_id` (needs `actions: read`), for when the
    results service does not list them."""

    github: GitHub
    run_id: int

    def listed(self) -> tuple[ListedArtifact, ...]:
        try:
            found = self.github.artifacts(self.run_id)
        except GitHubError as error:
            raise ArtifactError(str(error)) from None
        live = (a for a in found if not a.expired)
        return tuple(ListedArtifact(name=a.name, database_id=a.id, size=a.size_in_bytes) for a in live)

    def fetch(self, artifact: ListedArtifact, to: Path) -> int:
        try:
            return self.github.download(artifact.database_id, to)
        except (GitHubError, UnsafeArchive) as error:
            raise ArtifactError(str(error)) from None


class ShardArtifacts(msgspec.Struct, frozen=True):
    """The shards' artifacts of the run whose artifact is `name`, in the current workflow run,
    fetched and unpacked under `scratch` — from the first of `shelves` that lists the run's
    artifacts."""

    shelves: tuple[Shelves, ...]
    name: str
    scratch: Path

    def answering(self) -> tuple[Shelves, tuple[ListedArtifact, ...]]:
        """The first shelves that list the run's artifacts, and what they list."""
        reasons: list[str] = []
        for shelves in self.shelves:
            try:
                return shelves, shelves.listed()
            except ArtifactError as error:
                reasons.append(str(error))
        why = "; ".join(reasons) or "nowhere to ask"
        raise ConfigurationError(WHERE, f"the workflow run's artifacts cannot be listed: {why}")

    def guessed(self, key: str = "") -> str:
        """The artifact name of the one run whose shards this workflow run holds — ending in
        `-<key>` when a comment key is given — for a merge job whose project does not name its
        agent; ConfigurationError when there is none, or more than one."""
        _, listed = self.answering()
        bases = sorted({found[1] for a in listed if (found := SHARDED.fullmatch(a.name))})
        chosen = [base for base in bases if base.endswith(f"-{key}")] if key else bases
        if len(chosen) == 1:
            return chosen[0]
        if not chosen:
            raise ConfigurationError(
                WHERE,
                "this workflow run has no shard artifact <artifact-name>-shard-<k>-of-<n>: the merge job "
                "must `needs:` the shard jobs, with the same artifact-name and comment-key",
            )
        raise ConfigurationError(
            WHERE,
            f"this workflow run holds the shards of {', '.join(chosen)}: set artifact-name (or check out "
            "the project, so its agent is known, and set comment-key) to say which to merge",
        )

    def found(self, listed: tuple[ListedArtifact, ...]) -> dict[int, ListedArtifact]:
        """The shards' artifacts by shard number; ConfigurationError when none is there, when they
        are of different shard counts, or when one is missing."""
        pattern = re.compile(re.escape(self.name) + r"-shard-(\d+)-of-(\d+)")
        shards: dict[tuple[int, int], ListedArtifact] = {}
        for artifact in listed:
            matched = pattern.fullmatch(artifact.name)
            if matched is not None:
                shards[int(matched[1]), int(matched[2])] = artifact
        if not shards:
            raise ConfigurationError(
                WHERE,
                f"this workflow run has no shard artifact {self.name}-shard-<k>-of-<n>: the merge job "
                "must `needs:` the shard jobs, with the same artifact-name and comment-key",
            )
        counts = sorted({count for _, count in shards})
        if len(counts) > 1:
            raise ConfigurationError(
                WHERE,
                f"the shard artifacts of {self.name} are of {' and '.join(map(str, counts))} shards: "
                "every shard job of one run needs the same n in `shard: k/n`",
            )
        count = counts[0]
        for index in range(1, count + 1):
            if (index, count) not in shards:
                raise ConfigurationError(
                    WHERE,
                    f"shard {index}/{count} is missing: this workflow run has no artifact "
                    f"{self.name}-shard-{index}-of-{count} (did its job fail before uploading?)",
                )
        return {index: artifact for (index, _), artifact in sorted(shards.items())}

    def shards(self) -> Shards:
        """Every shard's run, fetched, unpacked and read back."""
        shelves, listed = self.answering()
        artifacts = self.found(listed)
        runs = tuple(self.fetched(shelves, artifact) for artifact in artifacts.values())
        return Shards(runs, tuple(artifact.name for artifact in artifacts.values()))

    def fetched(self, shelves: Shelves, artifact: ListedArtifact) -> StoredRun:
        self.scratch.mkdir(parents=True, exist_ok=True)
        archive = self.scratch / f"{artifact.database_id or artifact.name}.zip"
        folder = self.scratch / "shards" / artifact.name
        try:
            shelves.fetch(artifact, archive)
            Archive(archive).unpack(folder)
        except (ArtifactError, UnsafeArchive) as error:
            raise ConfigurationError(WHERE, f"artifact {artifact.name}: {error}") from None
        finally:
            archive.unlink(missing_ok=True)
        try:
            return Runs(folder.parent).one(folder)
        except (NewerFormat, ValueError) as error:
            reason = str(error).replace(str(folder), artifact.name)
            raise ConfigurationError(WHERE, f"artifact {artifact.name}: {reason}") from None
