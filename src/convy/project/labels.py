"""A project's labels (see docs/labels.md): files `labels/*.yaml`, each a list of attempts a person
labelled — the transcript and the person's decision on each claim — read with the line of each
part, so every error points at its file and line, and set against the scenarios as they are now.

A decision whose claim is no longer one of its scenario's claims (or whose scenario is gone) is
stale: left out and counted, never used."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

import msgspec
import yaml

from convy.data import Declared
from convy.errors import ConfigurationError
from convy.project.document import LOADER, Declaration, Document, Lines
from convy.project.scenario import Claim, Graded

Chosen = Literal["random", "failing"]
"""How a labelled attempt was picked: at random from a run (a fair sample), or among failing ones."""


class Exchange(Declared, frozen=True, kw_only=True):
    """One turn of a labelled transcript: what the user said and what the agent answered."""

    user: str
    agent: str


class Taken(Declared, frozen=True, kw_only=True):
    """Where a labelled attempt was taken from: a run's id and the attempt's index."""

    run: str = ""
    index: int = 0


class Label(Declared, frozen=True, kw_only=True):
    """One labelled attempt as its file declares it: a person's decision per claim, keyed by the
    claim's text (`true`/`false`, or a graded claim's grade name), on the whole transcript."""

    scenario: str
    transcript: tuple[Exchange, ...]
    decisions: dict[str, bool | str]
    source: Taken = msgspec.field(default_factory=Taken)
    by: str = ""
    chosen: Chosen = "random"

    def __post_init__(self) -> None:
        if not self.scenario.strip():
            raise ValueError("`scenario` is empty: name the scenario the attempt played")
        if not self.decisions:
            raise ValueError("`decisions` is empty: a label needs at least one decision")


class Placed(msgspec.Struct, frozen=True, kw_only=True):
    """A labelled attempt and where it is: the line it starts on and each decision's (file:line)."""

    label: Label
    where: str
    lines: dict[str, str]


class Stale(msgspec.Struct, frozen=True, kw_only=True):
    """A decision left out, where it is (file:line) and why."""

    where: str
    scenario: str
    claim: str
    why: str


class Labelled(msgspec.Struct, frozen=True, kw_only=True):
    """A labelled attempt set against its scenario as it is now: the scenario's claims (what the
    judge is asked), the person's pass on each claim still one of them (a grade counts as the pass
    it means), by claim text, and whether every claim of the scenario is labelled."""

    label: Label
    where: str
    claims: tuple[Claim, ...]
    passes: dict[str, bool]
    grades: dict[str, str]

    @property
    def whole(self) -> bool:
        """Every claim of the scenario has a decision."""
        return len(self.passes) == len(self.claims)


class LabelFile(msgspec.Struct, frozen=True):
    """One labels file: a YAML list of labelled attempts."""

    path: Path
    root: Path

    @property
    def file(self) -> str:
        """The file's path relative to the project root (or as given, outside it), with `/`."""
        try:
            return Path(os.path.relpath(self.path, self.root)).as_posix()
        except ValueError:
            return self.path.as_posix()

    def labels(self) -> tuple[Placed, ...]:
        """The file's labelled attempts, each with where it starts (file:line); ConfigurationError
        with file and line for anything wrong in it."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise ConfigurationError(self.file, "is not UTF-8 text") from error
        except OSError as error:
            raise ConfigurationError(self.file, f"cannot be read: {error.strerror}") from error
        try:
            root, data = self.parsed(text)
        except RecursionError:
            raise ConfigurationError(self.file, "is nested too deeply to be a labels file") from None
        lines = Lines(root)
        if not isinstance(data, list):
            raise ConfigurationError(
                f"{self.file}:{lines.line('$')}", "a labels file holds a list of labelled attempts"
            )
        try:
            read = msgspec.convert(data, list[Label])
        except msgspec.ValidationError as error:
            raise self.invalid(error, lines) from error
        file = self.file  # once: a file may hold tens of thousands of labels
        return tuple(
            Placed(label=label, where=f"{file}:{lines.line(f'$[{n}]')}", lines=self.decided(root, n, file))
            for n, label in enumerate(read)
        )

    def decided(self, root: yaml.Node, index: int, file: str) -> dict[str, str]:
        """Where each decision of the file's `index`th labelled attempt is (`file`:line), by claim."""
        item = root.value[index] if isinstance(root, yaml.SequenceNode) else None
        for key, value in item.value if isinstance(item, yaml.MappingNode) else ():
            if key.value == "decisions" and isinstance(value, yaml.MappingNode):
                return {str(name.value): f"{file}:{name.start_mark.line + 1}" for name, _ in value.value}
        return {}

    def parsed(self, text: str) -> tuple[yaml.Node, object]:
        """The file's node tree and its data; ConfigurationError when it is not YAML, is empty, or
        repeats a key in a mapping."""
        try:
            loader = LOADER(text)
        except yaml.YAMLError as error:
            raise ConfigurationError(f"{self.file}:1", f"YAML error: {error}") from error
        try:
            root = loader.get_single_node()
            if root is None:
                raise ConfigurationError(f"{self.file}:1", "the file is empty: it needs labelled attempts")
            repeated = Lines(root).repeated()
            if repeated:
                key, first, second = repeated[0]
                raise ConfigurationError(
                    f"{self.file}:{second}",
                    f"key `{key}` appears twice in one mapping (first on line {first})",
                )
            return root, loader.construct_document(root)
        except yaml.MarkedYAMLError as error:
            raise Document(self.path, self.root).unparsed(error, text) from None
        except yaml.YAMLError as error:
            raise ConfigurationError(f"{self.file}:1", f"YAML error: {error}") from error
        finally:
            loader.dispose()

    def invalid(self, error: msgspec.ValidationError, lines: Lines) -> ConfigurationError:
        """msgspec's error at the line of the key or item it is about."""
        text, _, at = str(error).partition(" - at `")
        path = at.removesuffix("`") or "$"
        unknown = re.fullmatch(r"Object contains unknown field `([^`]*)`", text)
        if unknown is not None:
            kind: type[msgspec.Struct] = (
                Exchange if ".transcript[" in path else Taken if ".source" in path else Label
            )
            known = ", ".join(field.encode_name for field in msgspec.structs.fields(kind))
            return ConfigurationError(
                f"{self.file}:{lines.line(f'{path}.{unknown.group(1)}')}",
                f"unknown key `{unknown.group(1)}` (the keys are: {known})",
            )
        missing = re.fullmatch(r"Object missing required field `([^`]*)`", text)
        if missing is not None:
            return ConfigurationError(
                f"{self.file}:{lines.line(path)}", f"the required key `{missing.group(1)}` is missing"
            )
        about = re.match(r"`([^`]+)`", text)
        if about is not None and not about.group(1).startswith(("object", "array", "str", "bool", "int")):
            return ConfigurationError(f"{self.file}:{lines.line(f'{path}.{about.group(1)}')}", text)
        shown = path.removeprefix("$").removeprefix(".")
        return ConfigurationError(
            f"{self.file}:{lines.line(path)}", f"{text} (at `{shown}`)" if shown else text
        )


class Labels(msgspec.Struct, frozen=True):
    """The labels folder of a project (`labels/`): its `*.yaml` and `*.yml` files, by path."""

    folder: Path
    root: Path

    def files(self) -> tuple[LabelFile, ...]:
        if not self.folder.is_dir():
            return ()
        found = [*self.folder.glob("*.yaml"), *self.folder.glob("*.yml")]
        return tuple(
            LabelFile(path, self.root) for path in sorted(found, key=lambda p: p.as_posix()) if path.is_file()
        )

    def read(self) -> tuple[Placed, ...]:
        """Every labelled attempt of every file, with where it starts; ConfigurationError for a
        malformed file."""
        return tuple(item for file in self.files() for item in file.labels())

    def against(
        self, declarations: tuple[Declaration, ...]
    ) -> tuple[tuple[Labelled, ...], tuple[Stale, ...]]:
        """The labelled attempts with at least one decision still used, and the stale decisions:
        those of a claim or scenario that is gone or changed, and those of a copy of a labelled
        attempt (the very same label again — its attempt, transcript and decisions —: only the first
        counts)."""
        scenarios = {d.scenario.name: d.scenario for d in declarations}
        used: list[Labelled] = []
        stale: list[Stale] = []
        first: dict[bytes, str] = {}
        for placed in self.read():
            label, where = placed.label, placed.where
            copied = first.setdefault(msgspec.json.encode(label), where)
            if copied != where:
                why = f"a copy of the label at {copied}: the attempt counts once"
                stale.extend(
                    Stale(where=placed.lines.get(claim, where), scenario=label.scenario, claim=claim, why=why)
                    for claim in label.decisions
                )
                continue
            scenario = scenarios.get(label.scenario)
            if scenario is None:
                stale.extend(
                    Stale(
                        where=placed.lines.get(claim, where),
                        scenario=label.scenario,
                        claim=claim,
                        why="the scenario is gone",
                    )
                    for claim in label.decisions
                )
                continue
            claims = {claim if isinstance(claim, str) else claim.claim: claim for claim in scenario.claims}
            passes: dict[str, bool] = {}
            grades: dict[str, str] = {}
            for text, decided in label.decisions.items():
                why = self.unfit(claims.get(text), decided)
                if why:
                    at = placed.lines.get(text, where)
                    stale.append(Stale(where=at, scenario=label.scenario, claim=text, why=why))
                    continue
                claim = claims[text]
                if isinstance(claim, Graded) and isinstance(decided, str):
                    passes[text], grades[text] = claim.grades[decided], decided
                else:
                    passes[text] = bool(decided)
            if passes:
                used.append(
                    Labelled(label=label, where=where, claims=scenario.claims, passes=passes, grades=grades)
                )
        return tuple(used), tuple(stale)

    def unfit(self, claim: Claim | None, decided: bool | str) -> str:
        """Why a decision cannot be used on the claim as it is now; "" when it can."""
        if claim is None:
            return "the claim is no longer one of the scenario's claims"
        if isinstance(claim, Graded):
            if not isinstance(decided, str):
                return "the claim is graded now: its label is a grade's name"
            if decided not in claim.grades:
                return f"`{decided}` is not one of the claim's grades ({', '.join(claim.grades)})"
            return ""
        if not isinstance(decided, bool):
            return "the claim is not graded now: its label is true or false"
        return ""
