"""A user's project folder as the settings describe it: its scenarios, which agent it plays, where
its run folders go, and its own Python files imported with the folder on sys.path."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

import msgspec

from convy.errors import ConfigurationError
from convy.project.document import Declaration
from convy.project.scenarios import Scenarios
from convy.project.selection import Selection
from convy.project.settings import Settings
from convy.project.sources import Sources


class PythonFile(msgspec.Struct, frozen=True):
    """A Python file of the project (agents/<name>.py, models.py), imported with the project folder
    on sys.path so the project's modules import each other."""

    path: Path
    root: Path

    def module(self) -> ModuleType:
        where = str(self.path.relative_to(self.root))
        if str(self.root) not in sys.path:
            sys.path.insert(0, str(self.root))
        spec = importlib.util.spec_from_file_location(f"convy_project_{self.path.stem}", self.path)
        if spec is None or spec.loader is None:
            raise ConfigurationError(where, "cannot be imported")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as error:  # the user's code: any error is a configuration error
            raise ConfigurationError(where, f"importing it failed: {type(error).__name__}: {error}") from None
        return module


class Project(msgspec.Struct, frozen=True):
    """The user's project as the settings describe it; `environ` gives ${VAR} in agent files."""

    settings: Settings
    sources: Sources
    environ: Mapping[str, str]
    selection: Selection = Selection()
    """Which scenarios a client chose (every one the `match` setting chooses, by default)."""

    @property
    def root(self) -> Path:
        return (self.sources.folder / self.settings.project).resolve()

    @property
    def results(self) -> Path:
        return self.root / self.settings.results

    def declarations(self) -> tuple[Declaration, ...]:
        """The scenarios the run plays, in declaration order."""
        return self.selection.chosen(self.settings.matching().chosen(self.every()))

    def every(self) -> tuple[Declaration, ...]:
        """Every scenario of the project, played or not."""
        return Scenarios(self.root, self.settings.scenarios, optional=bool(self.selection.added)).all()

    def scenario_files(self) -> tuple[Path, ...]:
        """The project's scenario files (ConfigurationError naming `scenarios` when there is none)."""
        return Scenarios(self.root, self.settings.scenarios).files()

    def left_out(self, played: tuple[Declaration, ...]) -> tuple[str, ...]:
        """The names of the project's scenarios that `match` or the selection leaves out of the run."""
        if not self.settings.matching().globs and self.selection.whole:
            return ()
        names = {d.scenario.name for d in played}
        return tuple(d.scenario.name for d in self.every() if d.scenario.name not in names)

    def agent_files(self) -> dict[str, Path]:
        folder = self.root / "agents"
        found = sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml")) + sorted(folder.glob("*.py"))
        return {path.stem: path for path in sorted(found)}

    def agent_name(self) -> str:
        """The agent played: `agent`, else `agent` when agent-url defines it, else the only file."""
        files = self.agent_files()
        if self.settings.agent_url:
            name = self.settings.agent or "agent"
            if name in files:
                raise ConfigurationError(
                    "agent-url",
                    f"defines agent {name!r}, and so does {files[name].relative_to(self.root)}: keep one",
                )
            return name
        if self.settings.agent:
            if self.settings.agent not in files:
                known = ", ".join(files) or "none"
                raise ConfigurationError(
                    "agent", f"no agents/{self.settings.agent}.yaml or .py (found: {known})"
                )
            return self.settings.agent
        if len(files) == 1:
            return next(iter(files))
        if not files:
            raise ConfigurationError("agent", "no agent: add agents/<name>.yaml (or .py), or set agent-url")
        raise ConfigurationError("agent", f"several agents ({', '.join(files)}): set `agent` to one")
