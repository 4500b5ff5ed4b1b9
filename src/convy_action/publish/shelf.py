"""Where the run folder goes once played: ArtifactShelf uploads it as the workflow run's artifact
through the results service; KeptFolder (dry.py) leaves it on disk. ArtifactName is checked before
anything is played; Retention caps the days asked to the repository's longest."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import msgspec

from convy.data import Tagged
from convy.draw.markdown import Marker
from convy.errors import ConfigurationError
from convy_action.github.artifacts import FORBIDDEN, ArtifactError, ResultsService, Uploaded, UploadedEarlier


class NotUploaded(Tagged, frozen=True, kw_only=True, tag="not_uploaded"):
    """The folder stayed on disk only, and why; `failed` when an upload was tried and failed."""

    reason: str
    failed: bool = False


Shelved = Uploaded | UploadedEarlier | NotUploaded


class Shelf(Protocol):
    def store(self, folder: Path) -> Shelved: ...


class ArtifactName(msgspec.Struct, frozen=True):
    """The artifact's name: `artifact-name`, else `convy-<agent>`, or `convy-<agent>-<key>` with a
    comment key (made safe as in the comment's marker), so matrix legs do not collide."""

    given: str
    agent: str
    key: str = ""

    @property
    def text(self) -> str:
        if self.given:
            return self.given
        if self.key:
            return f"convy-{self.agent}-{Marker(agent=self.agent).safe(self.key)}"
        return f"convy-{self.agent}"

    def check(self) -> None:
        if any(c in FORBIDDEN for c in self.text):
            raise ConfigurationError(
                "artifact-name", 'must not hold " : < > | * ? \\ / or line breaks (GitHub refuses them)'
            )


class Retention(msgspec.Struct, frozen=True):
    """The days asked for (`retention-days`, 0: the repository's default) and the repository's
    longest (GITHUB_RETENTION_DAYS, 0: not told)."""

    asked: int
    most: int

    def days(self) -> int:
        return self.most if self.lowered() else self.asked

    def lowered(self) -> bool:
        return 0 < self.most < self.asked


class ArtifactShelf(msgspec.Struct, frozen=True):
    """The workflow run's artifact `name`, uploaded through `service`, kept `days` days."""

    def replacing(self) -> ArtifactShelf:
        return msgspec.structs.replace(self, replace=True)

    service: ResultsService
    name: str
    days: int = 0
    replace: bool = False
    """Delete the run's artifact of that name first: a re-run that resumed it uploads its folder
    in its place (the service refuses a second artifact of one name in one run)."""

    def store(self, folder: Path) -> Shelved:
        try:
            return self.service.upload(self.name, folder, self.days, self.replace)
        except ArtifactError as error:
            return NotUploaded(reason=f"the upload failed: {error}", failed=True)
