"""What the plugin knows in one pytest session once asked for: the project and its agents read from
the settings as `convy run` reads them, the scenario files collected so far, and, once played, each
item's result and each run's gate."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

import convy
from convy import ConfigurationError
from convy.demo.servers import DemoServers
from convy.plugin.outcome import ItemResult
from convy.plugin.play import AgentItems, Picked, PytestRun, SessionRun


class Sitting:
    """The session's project (`flags` as the command line gives them, `environ`, `folder` the one
    `project` is relative to) and what the session has done with it."""

    def __init__(self, config: pytest.Config, flags: dict[str, object], environ: dict[str, str]) -> None:
        self.config = config
        self.flags = flags
        self.environ = environ
        self.folder = config.rootpath
        self.demo = bool(config.getoption("convy_demo"))
        self.baseline = str(config.getoption("convy_baseline") or "")
        try:
            sources = convy.Sources(flags, environ, self.folder)
            self.project = convy.Project(sources.settings(), sources, environ)
            files = self.project.agent_files()
            if self.project.settings.agent_url or self.project.settings.agent or len(files) < 2:
                single = files or self.project.settings.agent_url
                self.agents: tuple[str, ...] = (self.project.agent_name(),) if single else ("",)
            else:
                self.agents = tuple(files)
        except ConfigurationError as error:
            raise pytest.UsageError(f"convy: {error}") from None
        self.several = len(files) > 1
        self.visited: set[Path] = set()
        self._files: tuple[Path, ...] | None = None
        self.markers: set[str] = set()
        self.results: dict[tuple[str, str], ItemResult] = {}
        self.played: list[SessionRun] = []
        self.said: list[str] = []

    @classmethod
    def of(cls, config: pytest.Config, environ: dict[str, str]) -> Sitting:
        """The session's state from its options: `--convy-project` (relative to where pytest was
        started), `--convy-repeat`, `--convy-agent`; `--convy-demo` plays the bundled project."""
        flags: dict[str, object] = {}
        project = str(config.getoption("convy_project") or "")
        if project:
            flags["project"] = str((config.invocation_params.dir / project).resolve())
        if config.getoption("convy_demo"):
            flags["project"] = str(DemoServers().project)
        if config.getoption("convy_repeat"):
            flags["repeat"] = str(config.getoption("convy_repeat"))
        if config.getoption("convy_agent"):
            flags["agent"] = str(config.getoption("convy_agent"))
        return cls(config, flags, environ)

    @property
    def root(self) -> Path:
        return self.project.root

    def files(self) -> tuple[Path, ...]:
        """The project's scenario files, resolved, read once (none is no error here: a project may
        write its scenarios in Python)."""
        if self._files is None:
            try:
                self._files = tuple(path.resolve() for path in self.project.scenario_files())
            except ConfigurationError:
                self._files = ()
        return self._files

    def is_scenario_file(self, path: Path) -> bool:
        return path.suffix in (".yaml", ".yml") and path.resolve() in self.files()

    def unvisited(self) -> tuple[Path, ...]:
        """The scenario files pytest's walk did not reach (the project outside the test paths)."""
        return tuple(path for path in self.files() if path not in self.visited)

    def marked(self, tag: str) -> str:
        """`tag`, registered as a marker (so --strict-markers takes it)."""
        if tag not in self.markers:
            self.markers.add(tag)
            self.config.addinivalue_line("markers", f"{tag}: convy scenarios tagged {tag}")
        return tag

    def named(self, name: str, agent: str) -> str:
        """An item's name: the scenario's, with `[agent]` when the project has several agents."""
        return f"{name}[{agent}]" if self.several and agent else name

    def where(self, path: Path) -> str:
        """A file's path as a scenario's `file` says it: relative to the project, with `/`."""
        return Path(os.path.relpath(path, self.root)).as_posix()

    def play(self, chosen: Sequence[Picked]) -> None:
        """Play every selected convy item, in one run per agent, and keep each item's result."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        show = reporter.write_line if reporter is not None else self.say
        run = PytestRun(flags=self.flags, environ=self.environ, folder=self.folder, demo=self.demo)
        for agent in self.agents:
            items = AgentItems(
                agent=agent, picked=tuple(p for p in chosen if p.agent == agent), baseline=self.baseline
            )
            if not items.picked:
                continue
            try:
                played = run.played(items, show, self.say)
            except ConfigurationError as error:
                for name in items.names:
                    self.results[(agent, name)] = ItemResult.unplayable(f"convy: {error}")
                continue
            self.played.append(played)
            for name, result in played.results(items.names).items():
                self.results[(agent, name)] = result

    def say(self, line: str) -> None:
        self.said.append(line)

    def result(self, agent: str, name: str) -> ItemResult:
        return self.results.get((agent, name), ItemResult.unplayable("convy: the scenario was not played"))

    def summary(self) -> list[str]:
        lines = list(self.said)
        for played in self.played:
            lines += played.summary()
        return lines

    def gated(self) -> bool:
        """Whether every run's gate passed."""
        return all(played.gated for played in self.played)
