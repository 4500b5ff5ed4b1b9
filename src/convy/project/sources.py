"""Where settings come from, highest first: command-line flags, the runner's INPUT_* variables,
CONVY_* variables, `[tool.convy]` of the project's pyproject.toml, then the defaults; each value
checked where it was given, so an error names the setting and its source but never the value."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TypeVar, overload

import msgspec

from convy.errors import ConfigurationError
from convy.project.names import MODELS
from convy.project.settings import Setting, Settings

S = TypeVar("S", bound=Settings)
OWN = frozenset({"CONVY_DEMO_URL"})
"""Variables convy sets itself, for the demo's agent file."""


class Given(msgspec.Struct, frozen=True):
    """A setting's value as one source gave it, and where that is: `max-drop (INPUT_MAX-DROP)`,
    `pyproject.toml [tool.convy] max-drop`."""

    setting: Setting
    value: object
    where: str


class Tool(msgspec.Struct, frozen=True):
    """The `[tool]` table of pyproject.toml, as far as convy reads it."""

    convy: dict[str, object] = msgspec.field(default_factory=dict)


class Pyproject(msgspec.Struct, frozen=True):
    """pyproject.toml, as far as convy reads it: `[tool.convy]`."""

    tool: Tool = msgspec.field(default_factory=Tool)


class Sources(msgspec.Struct, frozen=True):
    """Where settings come from, highest first: `flags` (hyphenated names, only those given on the
    command line), the runner's inputs (`INPUT_*` in `environ`), `CONVY_*` (in `environ`), `[tool.convy]`
    of `<project>/pyproject.toml`, then the defaults. `folder` is the folder `project` is relative to
    (the current one). An empty `INPUT_*` or `CONVY_*` counts as not given (the runner passes `""` for an
    input not set); their values are read without surrounding whitespace, as the runner's toolkit does.
    Unknown `INPUT_*`/`CONVY_*` variables are ignored (a project may use `CONVY_` for its own variables);
    an unknown key in `[tool.convy]` is an error, unless an installed program built on the engine
    declares it (Extensions)."""

    flags: Mapping[str, object]
    environ: Mapping[str, str]
    folder: Path

    @overload
    def settings(self) -> Settings: ...
    @overload
    def settings(self, kind: type[S]) -> S: ...
    def settings(self, kind: type[Settings] = Settings) -> Settings:
        """Every setting's value, of `kind` (Settings, or a program's extension of it);
        ConfigurationError naming the setting and its source for a bad one."""
        given = self.given(kind)
        for value in given.values():
            value.setting.check(value.value, value.where)
        return msgspec.convert({name: value.value for name, value in given.items()}, kind, strict=False)

    def strays(self, kind: type[Settings] = Settings) -> tuple[str, ...]:
        """A warning for each `CONVY_*` variable that names no setting, with the nearest (Strays)."""
        return Strays(self.environ, kind).said()

    def models(self) -> tuple[str, ...]:
        """Where each setting that defines the models (model-url, model-key, user-model, judge-model)
        was given, from whichever source: `model-url (CONVY_MODEL_URL)`. Empty when none was given;
        a project with models.py and any of these is exit 2, naming both."""
        given = self.given(Settings)
        return tuple(given[name].where for name in MODELS if name in given)

    def given(self, kind: type[Settings] = Settings) -> dict[str, Given]:
        """The value of each setting of `kind` given by some source, from the highest source that
        gives it."""
        upper = self.commanded(kind)
        project = upper["project"].value if "project" in upper else "."
        return {**self.pyproject(Path(str(project)), kind), **upper}

    def commanded(self, kind: type[Settings] = Settings) -> dict[str, Given]:
        """The settings given by flags and the environment (all but [tool.convy]), highest winning."""
        given: dict[str, Given] = {}
        for name in kind.descriptions:
            setting = Setting(name, kind)
            variable = self.environ.get(setting.variable, "").strip()
            if variable:
                given[name] = Given(setting, variable, f"{name} ({setting.variable})")
            for key in reversed(setting.inputs):
                entered = self.environ.get(key, "").strip()
                if entered:
                    given[name] = Given(setting, entered, f"{name} ({key})")
        for name, value in self.flags.items():
            if name not in kind.descriptions:
                raise ConfigurationError(f"--{name}", "is not a setting")
            given[name] = Given(Setting(name, kind), value, f"{name} (--{name})")
        return given

    def pyproject(self, project: Path, kind: type[Settings] = Settings) -> dict[str, Given]:
        """The settings of `kind` in `[tool.convy]` of the project's pyproject.toml (none without the
        file); a key only another program built on the engine declares is left to it."""
        path = self.folder / project / "pyproject.toml"
        file = (project / "pyproject.toml").as_posix()
        try:
            content = path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as error:
            raise ConfigurationError(file, f"cannot be read: {error.strerror}") from None
        try:
            table = msgspec.toml.decode(content, type=Pyproject).tool.convy
        except msgspec.ValidationError:
            raise ConfigurationError(f"{file} [tool.convy]", "must be a table of settings") from None
        except msgspec.DecodeError as error:
            raise ConfigurationError(file, f"is not valid TOML: {error}") from None
        given: dict[str, Given] = {}
        others = Extensions()
        for name, value in table.items():
            where = f"{file} [tool.convy] {name}"
            known = name in kind.descriptions
            if not known and name not in others.names():
                raise ConfigurationError(
                    where, "is not a setting (keys are the hyphenated names: max-drop, model-url, ...)"
                )
            if name in kind.secrets or name in others.secrets():
                raise ConfigurationError(
                    where,
                    "is a secret and does not belong in a file of the repository:"
                    f" set {Setting(name, kind).variable if known else name} or the action's input instead",
                )
            if name == "project":
                raise ConfigurationError(where, "cannot be set here: it says where this file is")
            if not known:
                continue
            if isinstance(value, dict):  # a table (`prices`) is the setting's JSON text
                value = msgspec.json.encode(value).decode()
            given[name] = Given(Setting(name, kind), value, where)
        return given


class Extensions(msgspec.Struct, frozen=True):
    """The settings of the programs built on the engine that are installed (the action): each
    declares its Settings subclass under the entry-point group `convy.settings`, so a `[tool.convy]`
    key of theirs is not an unknown key to `convy run`. Looked up only when a key is not the
    engine's own."""

    group: str = "convy.settings"

    def kinds(self) -> tuple[type[Settings], ...]:
        from importlib.metadata import entry_points

        loaded = (point.load() for point in entry_points(group=self.group))
        return tuple(kind for kind in loaded if isinstance(kind, type) and issubclass(kind, Settings))

    def names(self) -> frozenset[str]:
        return frozenset(name for kind in self.kinds() for name in kind.descriptions)

    def secrets(self) -> frozenset[str]:
        return frozenset(name for kind in self.kinds() for name in kind.secrets)


class Strays(msgspec.Struct, frozen=True):
    """The `CONVY_*` variables of `environ` that name no setting — of `kind`, nor of an installed
    program built on the engine — each said with the nearest setting's variable: a misspelt one
    (`CONVY_MIN_PASS`) would otherwise be ignored without a word. The variables convy sets itself
    for an agent file (`CONVY_DEMO_URL`) are not strays."""

    environ: Mapping[str, str]
    kind: type[Settings] = Settings

    def said(self) -> tuple[str, ...]:
        """One line for each stray variable, in name order; empty when there is none."""
        known = self.variables(self.kind.descriptions)
        strays = sorted(key for key in self.environ if key.startswith("CONVY_") and key not in known)
        if not strays:
            return ()
        known |= self.variables(Extensions().names())
        lines = []
        for stray in strays:
            if stray in known:
                continue
            near = difflib.get_close_matches(stray, sorted(known - OWN), n=1, cutoff=0.6)
            hint = f": did you mean `{near[0]}`?" if near else " (convy ignores it)"
            lines.append(f"`{stray}` is not a setting{hint}")
        return tuple(lines)

    def variables(self, names: Iterable[str]) -> set[str]:
        return {f"CONVY_{name.upper().replace('-', '_')}" for name in names} | OWN
