"""Run folders read back: newer formats refused, older ones converted, malformed and repeated
attempt lines skipped (and said which), and what could not be read kept for the command to show."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import msgspec

from convy.data import Data
from convy.play.outcome import Outcome
from convy.store.attempts import Damage
from convy.store.journal import NewerFormat, RunJournal
from convy.store.runfile import RunFile

RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]+")
"""A run id, as a run's folder is named when it is made: UTC time and a short random part."""


class Broken(Data, frozen=True, kw_only=True):
    """A folder that could not be read, and why."""

    folder: str
    reason: str


class StoredRun(msgspec.Struct, frozen=True):
    """A run folder read back: its run.json, and its outcomes streamed from attempts.jsonl."""

    journal: RunJournal
    file: RunFile

    @property
    def folder(self) -> Path:
        return self.journal.folder

    @property
    def key(self) -> str:
        """What names the run wherever its folder is unpacked: its agent and its start."""
        return f"{self.file.spec.agent}@{self.file.started}"

    @property
    def name(self) -> str:
        """What names the run in another run's records (a reused verdict's `run`): its run id, the
        name of its folder as it was made, or its key when the folder was unpacked under another
        name (a downloaded baseline)."""
        return self.folder.name if RUN_ID.fullmatch(self.folder.name) else self.key

    def outcomes(self) -> Iterator[Outcome]:
        return self.journal.outcomes()

    def torn(self) -> bool:
        return self.journal.torn()

    def damage(self) -> tuple[Damage, ...]:
        """The attempt lines not counted (malformed, torn, or a second line for one attempt)."""
        return self.journal.damage()

    def readable(self) -> int:
        """How many attempts the folder holds that count."""
        return sum(1 for _ in self.outcomes())


class Runs(msgspec.Struct, frozen=True):
    """Every run folder under a results folder (results/<agent>/<run-id>/), oldest first."""

    results: Path

    def folders(self) -> tuple[Path, ...]:
        found = [p.parent for p in self.results.glob("*/*/run.json")]
        return tuple(sorted(found, key=lambda folder: (folder.name, folder.parent.name)))

    def one(self, folder: Path) -> StoredRun:
        """One run folder; NewerFormat when it is newer than this code, ValueError when unreadable."""
        journal = RunJournal(folder)
        if not journal.run_file.is_file():
            raise ValueError(f"{folder} is not a run folder (no run.json)")
        return StoredRun(journal, journal.header())

    def readable(self) -> tuple[StoredRun, ...]:
        runs: list[StoredRun] = []
        for folder in self.folders():
            try:
                runs.append(self.one(folder))
            except (NewerFormat, ValueError):
                continue
        return tuple(runs)

    def broken(self) -> tuple[Broken, ...]:
        """The folders that could not be read, with the reason, for the command to show."""
        found: list[Broken] = []
        for folder in self.folders():
            try:
                self.one(folder).damage()
            except (NewerFormat, ValueError) as error:
                found.append(Broken(folder=str(folder), reason=str(error)))
        return tuple(found)
