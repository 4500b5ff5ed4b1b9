"""Labelling a run's judged attempts (`convy label`; see docs/labels.md): the run read from its folder or
its artifact zip, its judged attempts drawn in an order seeded by the run id (those with a failing
claim first when asked), and each answer written to the labels file as it is given."""

from __future__ import annotations

import random
import re
import shutil
import zipfile
from pathlib import Path, PurePosixPath

import msgspec
import yaml

from convy.errors import ConfigurationError
from convy.play.outcome import ClaimResult, Turn, Verdict
from convy.project.labels import Chosen, LabelFile
from convy.project.scenario import Claim, Graded
from convy.store.atomic import AtomicFile
from convy.store.journal import NewerFormat
from convy.store.runs import RUN_ID, Runs, StoredRun

RUN_FILES = ("run.json", "attempts.jsonl")
"""What labelling needs of a run folder."""
MOST = 256 * 1024 * 1024
"""The most a run's zip may unpack to."""


class RunZip(msgspec.Struct, frozen=True):
    """A run folder zipped (as the action uploads it: run.json at the zip's root, or under one
    folder)."""

    path: Path

    def unpacked(self, into: Path) -> Path:
        """run.json and attempts.jsonl written to `into` (an empty folder); that folder.
        ConfigurationError when the zip is unreadable or holds no run."""
        try:
            with zipfile.ZipFile(self.path) as zipped:
                names = {
                    PurePosixPath(info.filename): info for info in zipped.infolist() if not info.is_dir()
                }
                runs = sorted((name for name in names if name.name == "run.json"), key=lambda n: len(n.parts))
                if not runs or len(runs[0].parts) > 2:
                    raise ConfigurationError(str(self.path), "the zip holds no run folder (no run.json)")
                total = 0
                for wanted in RUN_FILES:
                    info = names.get(runs[0].parent / wanted)
                    if info is None:
                        continue
                    with zipped.open(info) as source, (into / wanted).open("wb") as sink:
                        while chunk := source.read(1024 * 1024):
                            total += len(chunk)
                            if total > MOST:
                                raise ConfigurationError(str(self.path), "the zip's run is too large to read")
                            sink.write(chunk)
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as error:
            raise ConfigurationError(str(self.path), f"is not a readable zip ({error})") from None
        return into


class Unlabelled(msgspec.Struct, frozen=True, kw_only=True):
    """A judged attempt to ask a person about: its scenario, index, transcript, the judge's decision
    on each claim it decided (checks left out), and the grades of each graded claim, by claim text."""

    scenario: str
    index: int
    turns: tuple[Turn, ...]
    judged: tuple[ClaimResult, ...]
    grades: dict[str, tuple[str, ...]] = {}

    @property
    def failing(self) -> bool:
        """Some claim the judge decided does not hold."""
        return any(not result.passed for result in self.judged)


class LabelDraw(msgspec.Struct, frozen=True, kw_only=True):
    """A run's judged attempts in the order a person is asked them: shuffled with the run id as the
    seed, those with a failing claim first when `failing`; `claims` are the project's scenarios'
    claims by scenario name (where a graded claim's grades come from)."""

    run: StoredRun
    id: str
    claims: dict[str, tuple[Claim, ...]]
    failing: bool = False

    def attempts(self) -> tuple[Unlabelled, ...]:
        """Every judged attempt of the run (its verdict has a judge's decision), in asking order."""
        found: list[Unlabelled] = []
        for outcome in self.run.outcomes():
            if not isinstance(outcome.decision, Verdict):
                continue
            judged = tuple(result for result in outcome.decision.claims if not result.checked)
            if not judged:
                continue
            graded = {
                claim.claim: tuple(claim.grades)
                for claim in self.claims.get(outcome.scenario, ())
                if isinstance(claim, Graded)
            }
            found.append(
                Unlabelled(
                    scenario=outcome.scenario,
                    index=outcome.index,
                    turns=outcome.turns,
                    judged=judged,
                    grades={r.claim: graded[r.claim] for r in judged if r.claim in graded},
                )
            )
        found.sort(key=lambda attempt: (attempt.scenario, attempt.index))
        random.Random(self.id).shuffle(found)
        if self.failing:
            found.sort(key=lambda attempt: not attempt.failing)
        return tuple(found)

    def drawn(self, count: int, kept: frozenset[tuple[str, str, int]]) -> tuple[Unlabelled, ...]:
        """The first `count` attempts not already labelled (`kept`: (run, scenario, index))."""
        fresh = [a for a in self.attempts() if (self.id, a.scenario, a.index) not in kept]
        return tuple(fresh[:count])

    def chosen(self, attempt: Unlabelled) -> Chosen:
        """How the attempt's label says it was chosen: `failing` when it was asked first for a
        failing claim, else `random`."""
        return "failing" if self.failing and attempt.failing else "random"


class LabelSink(msgspec.Struct, frozen=True):
    """The labels file answers go to, rewritten whole and atomically after each answer, so it is
    valid YAML holding every answer given so far whenever it is read."""

    path: Path
    root: Path

    def kept(self) -> frozenset[tuple[str, str, int]]:
        """The attempts the file labels already, as (run, scenario, index); ConfigurationError with
        file:line when it is malformed, or when it is a link out of its folder (Linked)."""
        self.linked()
        if not self.path.exists():
            return frozenset()
        return frozenset(
            (placed.label.source.run, placed.label.scenario, placed.label.source.index)
            for placed in LabelFile(self.path, self.root).labels()
        )

    def linked(self) -> None:
        """ConfigurationError when the file is a symbolic link that leads to nothing or out of its
        folder: an answer is never written through it to a file elsewhere."""
        if not self.path.is_symlink():
            return
        target = self.path.resolve()
        if not target.exists() or not target.is_relative_to(self.path.parent.resolve()):
            raise ConfigurationError(
                str(self.path),
                "is a symbolic link to a file outside its folder, or to none: convy label writes "
                "nothing through it (remove the link, or name another file with --to)",
            )

    def text(self) -> str:
        """What the file holds now ("" when it is not there or holds only an empty list)."""
        if not self.path.exists():
            return ""
        text = self.path.read_text(encoding="utf-8")
        if text.strip() in ("", "[]"):
            return ""
        return text if text.endswith("\n") else text + "\n"

    def written(self, before: str, label: dict[str, object]) -> str:
        """The file as `before` plus this label (a labelled attempt, as the file holds it); its text."""
        item = yaml.safe_dump([label], allow_unicode=True, sort_keys=False, width=100_000)
        text = before + item
        self.linked()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        AtomicFile(self.path).write_bytes(text.encode("utf-8"))
        return text


class LabelName(msgspec.Struct, frozen=True):
    """A run id made safe for a file name (labels/<run id>.yaml)."""

    id: str

    @property
    def file(self) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "-", self.id).strip("-.") + ".yaml"


class LabelledRun(msgspec.Struct, frozen=True):
    """A run named on the command line: its folder or its artifact zip (unpacked to `scratch`)."""

    given: Path

    def read(self, scratch: Path) -> tuple[StoredRun, str]:
        """The run and its id (the folder's or the zip's name when it is a run id, else the run's
        key); ConfigurationError when it cannot be read."""
        if not self.given.exists():
            raise ConfigurationError(str(self.given), "no such run folder or zip")
        folder = self.given
        if self.given.is_file():
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir(parents=True)
            folder = RunZip(self.given).unpacked(scratch)
        try:
            run = Runs(folder.parent).one(folder)
        except (NewerFormat, ValueError) as error:
            raise ConfigurationError(str(self.given), str(error)) from None
        name = self.given.stem if self.given.is_file() else self.given.name
        return run, name if RUN_ID.fullmatch(name) else run.name
