"""Scenarios as pytest items: a scenario file as a collector (a mistake in it a collection error at
its file and line), each of its scenarios an item (`scenarios/refund.yaml::refund`, `[agent]` added
when the project has several agents), and the scenarios a test module writes in Python items of
that module. An item plays nothing: it reports what the session's one run left for its scenario."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from convy import ConfigurationError, ConvyError
from convy.plugin.outcome import ItemResult
from convy.plugin.play import Picked
from convy.plugin.stash import Stashed
from convy.project.document import Declaration, Document
from convy.project.written import WRITTEN

if TYPE_CHECKING:
    from convy.plugin.state import Sitting


class ScenarioFile(pytest.File):
    """A scenario file of the project."""

    sitting: Sitting

    @classmethod
    def outside(cls, session: pytest.Session, path: Path, sitting: Sitting) -> ScenarioFile:
        """A scenario file pytest's walk did not reach, named relative to the project when it lies
        outside the rootdir."""
        inside = path.resolve().is_relative_to(session.config.rootpath.resolve())
        nodeid = None if inside else sitting.where(path)
        made: ScenarioFile = cls.from_parent(session, path=path, nodeid=nodeid)
        return made

    def collect(self) -> Iterator[pytest.Item]:
        state = Stashed(self.config).sitting()
        if state is None:
            return
        state.visited.add(self.path.resolve())
        for declaration in Document(self.path, state.root).declarations():
            yield from ScenarioItem.each(self, declaration, state, written=False)

    def repr_failure(  # type: ignore[override]
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> str:
        if isinstance(excinfo.value, ConfigurationError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class ScenarioFailed(ConvyError):
    """An item's scenario did not hold in the run: its report's text."""


class ScenarioItem(pytest.Item):
    """One scenario against one agent ("" the project's only one)."""

    def __init__(self, *, declaration: Declaration, agent: str, written: bool, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.declaration = declaration
        self.agent = agent
        self.picked = Picked(declaration=declaration, agent=agent, written=written)

    @classmethod
    def each(
        cls, parent: pytest.Collector, declaration: Declaration, state: Sitting, written: bool
    ) -> Iterator[ScenarioItem]:
        """The items of one scenario: one for each agent the session plays."""
        for agent in state.agents:
            item: ScenarioItem = cls.from_parent(
                parent,
                name=state.named(declaration.scenario.name, agent),
                declaration=declaration,
                agent=agent,
                written=written,
            )
            for tag in declaration.scenario.tags:
                item.add_marker(state.marked(tag))
            yield item

    @classmethod
    def written_by(cls, module: pytest.Module, state: Sitting) -> list[ScenarioItem]:
        """The items of the scenarios `module` wrote in Python."""
        items: list[ScenarioItem] = []
        for line, scenario in WRITTEN.of(module.path):
            checks = len(scenario.claims) + len(scenario.checks)
            declaration = Declaration(
                scenario=scenario, file=state.where(module.path), line=line, claim_lines=(line,) * checks
            )
            items += cls.each(module, declaration, state, written=True)
        return items

    def result(self) -> ItemResult:
        state = Stashed(self.config).sitting()
        if state is None:
            return ItemResult.unplayable("convy: the plugin is not asked for")
        return state.result(self.agent, self.declaration.scenario.name)

    def setup(self) -> None:
        result = self.result()
        if result.counted or result.attempts:
            self.user_properties += [
                ("held", result.held),
                ("counted", result.counted),
                ("attempts", result.attempts),
                ("run_folder", result.folder),
            ]
        if result.kind == "error":
            # in setup, so pytest reports an error; its message alone, as a failed item's
            pytest.fail(result.text, pytrace=False)
        if result.kind == "skipped":
            pytest.skip(result.text)

    def runtest(self) -> None:
        result = self.result()
        if result.kind == "failed":
            raise ScenarioFailed(result.text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: object = None) -> str:
        if isinstance(excinfo.value, ScenarioFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.declaration.line - 1, f"convy scenario {self.declaration.scenario.name}"
