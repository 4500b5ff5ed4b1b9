"""A project's scenarios: its scenario files, read in a stable order, and the `match` setting, which
of them to play."""

from __future__ import annotations

import glob
from fnmatch import fnmatchcase
from pathlib import Path

import msgspec

from convy.errors import ConfigurationError
from convy.project.document import Declaration, Document


class Scenarios(msgspec.Struct, frozen=True):
    """The scenarios of a project. `pattern` (the `scenarios` setting) is relative to the project: a
    folder, whose `*.yaml` and `*.yml` files are read with its subfolders' (`scenarios/drafted`,
    `scenarios/attacks`, `scenarios/kept` play with no setting), or a glob of files
    (`scenarios/**/*.yaml`, `checks/refund.yaml`). Names are unique across the whole tree.
    `optional`: a project that has scenarios written in Python (project/written.py) needs no
    scenario file."""

    project: Path
    pattern: str = "scenarios"
    optional: bool = False

    def files(self) -> tuple[Path, ...]:
        """The scenario files, sorted by their path; ConfigurationError naming `scenarios` when there
        is none (unless `optional`)."""
        folder = self.project / self.pattern
        if folder.is_dir():
            found = [*folder.rglob("*.yaml"), *folder.rglob("*.yml")]
        else:
            names = glob.glob(self.pattern, root_dir=self.project, recursive=True)
            found = [self.project / name for name in names]
        files = sorted((path for path in found if path.is_file()), key=lambda path: path.as_posix())
        if not files and not self.optional:
            raise ConfigurationError(
                "scenarios",
                f"no scenario files found at `{self.pattern}` (a folder of *.yaml files, its subfolders"
                " too, or a glob of files, relative to the project)",
            )
        return tuple(files)

    def all(self) -> tuple[Declaration, ...]:
        """Every scenario in declaration order: files by path, then their order within a file.
        ConfigurationError for a bad file, or for a name used twice (naming both places)."""
        declarations = tuple(
            declaration
            for path in self.files()
            for declaration in Document(path, self.project).declarations()
        )
        first: dict[str, Declaration] = {}
        for declaration in declarations:
            name = declaration.scenario.name
            if name in first:
                raise ConfigurationError(
                    declaration.where,
                    f"the scenario name `{name}` is used twice: {first[name].where} and {declaration.where}"
                    " (names are unique across the project; a file's stem is its scenario's default name)",
                )
            first[name] = declaration
        return declarations


class Matching(msgspec.Struct, frozen=True):
    """The `match` setting: globs (fnmatch, case-sensitive) over scenario names and tags. A scenario is
    chosen when its name or one of its tags matches any glob; no globs choose every scenario. Blank
    globs (from `a,,b` or spaces around commas) are left out."""

    patterns: tuple[str, ...] = ()

    @property
    def globs(self) -> tuple[str, ...]:
        """The patterns without surrounding spaces, blanks left out."""
        return tuple(pattern.strip() for pattern in self.patterns if pattern.strip())

    def chosen(self, declarations: tuple[Declaration, ...]) -> tuple[Declaration, ...]:
        """The declarations matched, in their order; ConfigurationError naming `match` when a glob
        matches no scenario (a typo would otherwise silently play fewer)."""
        globs = self.globs
        if not globs:
            return declarations
        for pattern in globs:
            if not any(self.matches(pattern, declaration) for declaration in declarations):
                raise ConfigurationError(
                    "match", f"`{pattern}` matches no scenario's name or tag ({len(declarations)} scenarios)"
                )
        return tuple(
            declaration
            for declaration in declarations
            if any(self.matches(pattern, declaration) for pattern in globs)
        )

    def matches(self, pattern: str, declaration: Declaration) -> bool:
        """Whether the glob matches the scenario's name or one of its tags."""
        scenario = declaration.scenario
        return any(fnmatchcase(word, pattern) for word in (scenario.name, *scenario.tags))
