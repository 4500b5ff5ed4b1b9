"""Where the run folder goes once played: uploaded as the workflow run's artifact through the
results service, or left on disk by dry.py's stand-in. The artifact's name is checked before
anything is played; the days it is kept are capped at the repository's longest."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Protocol

import msgspec

from convy import ConfigurationError
from convy.runs import Marker
from convy.tools import Data, Tagged
from convy_action.github.artifacts import FORBIDDEN, ArtifactError, ResultsService, Uploaded, UploadedEarlier


class NotUploaded(Tagged, frozen=True, kw_only=True, tag="not_uploaded"):
    """The folder stayed on disk only, and why; `failed` when an upload was tried and failed."""

    reason: str
    failed: bool = False


Shelved = Uploaded | UploadedEarlier | NotUploaded

PAGES = ("report", "comparison")
"""The run's pages uploaded one by one, unzipped: `<artifact-name>-report.html`, `-comparison.html`."""


class Pages(Data, frozen=True, kw_only=True):
    """The artifact ids of the run's pages uploaded as single files (0: not uploaded), and why they
    were not when the service refused them (links then go to the run's artifact)."""

    report: int = 0
    comparison: int = 0
    refused: str = ""


class Shelf(Protocol):
    def store(self, folder: Path) -> Shelved: ...

    def pages(self, folder: Path) -> Pages: ...


class ArtifactNaming(msgspec.Struct, frozen=True):
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

    def pages(self, folder: Path) -> Pages:
        """report.html and comparison.html (where the folder has them) uploaded unzipped, each as
        the artifact `<name>-<page>.html`, so a browser opens it from the comment's links (see
        docs/action.md); an earlier attempt's pages of the same names are replaced."""
        uploaded: dict[str, int] = {}
        replace = self.replace or self.service.attempt > 1
        with tempfile.TemporaryDirectory(prefix="convy-pages-") as scratch:
            for page in PAGES:
                source = folder / f"{page}.html"
                if not source.is_file():
                    continue
                named = Path(scratch) / f"{self.name}-{page}.html"
                shutil.copyfile(source, named)
                try:
                    shelved = self.service.upload_file(named, self.days, replace)
                except (ArtifactError, ConfigurationError) as error:
                    refused = f"{page}.html was not uploaded on its own: {error}"
                    return Pages(report=uploaded.get("report", 0), refused=refused)
                if isinstance(shelved, Uploaded):
                    uploaded[page] = shelved.id
        return Pages(report=uploaded.get("report", 0), comparison=uploaded.get("comparison", 0))
