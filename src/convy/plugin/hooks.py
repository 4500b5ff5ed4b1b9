"""convy's pytest plugin, as pytest loads it (entry point `pytest11`, name `convy`): inert unless
`--convy` (or `convy = true` in the ini options) asks for it. Only pytest and the standard library
are imported here; the engine is imported once the plugin is asked for."""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path

import pytest

from convy.plugin.stash import Stashed


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("convy", "convy: conversation scenarios as test items")
    group.addoption("--convy", action="store_true", default=False, help="play the project's scenarios")
    group.addoption("--convy-project", default="", metavar="FOLDER", help="the project (default: rootdir)")
    group.addoption("--convy-repeat", default="", metavar="N", help="attempts of each scenario")
    group.addoption("--convy-baseline", default="", metavar="RUN", help="a run folder to compare with")
    group.addoption("--convy-agent", default="", metavar="NAME", help="the agent to play (agents/NAME)")
    group.addoption("--convy-demo", action="store_true", default=False, help="play the bundled demo project")
    parser.addini("convy", type="bool", default=False, help="play the project's convy scenarios")


def pytest_configure(config: pytest.Config) -> None:
    if not Stashed(config).asked() or hasattr(config, "workerinput"):
        return
    if getattr(config.option, "numprocesses", None):
        raise pytest.UsageError(
            "convy: pytest-xdist's -n cannot play convy scenarios: one run plays them all, "
            "concurrently already. To split them over CI jobs, give each job the setting "
            "`shard: k/n` (CONVY_SHARD=1/2 ...)"
        )
    from convy.plugin.state import Sitting

    Stashed(config).keep(Sitting.of(config, dict(os.environ)))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    state = Stashed(parent.config).sitting()
    if state is None or not state.is_scenario_file(file_path):
        return None
    from convy.plugin.items import ScenarioFile

    return ScenarioFile.from_parent(parent, path=file_path)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    state = Stashed(collector.config).sitting()
    if state is not None and isinstance(collector, pytest.Module) and report.passed:
        from convy.plugin.items import ScenarioItem

        report.result.extend(ScenarioItem.written_by(collector, state))
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    state = Stashed(config).sitting()
    if state is None or config.args_source == pytest.Config.ArgsSource.ARGS:
        return
    from convy.plugin.items import ScenarioFile

    for path in state.unvisited():
        items.extend(session.genitems(ScenarioFile.outside(session, path, state)))


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    state = Stashed(session.config).sitting()
    if state is None or session.config.option.collectonly:
        return
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        return
    from convy.plugin.items import ScenarioItem

    state.play([item.picked for item in session.items if isinstance(item, ScenarioItem)])


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
    if Stashed(config).sitting() is None or report.when != "call":
        return None
    figures = dict(report.user_properties)
    if "held" not in figures:
        return None
    word = report.outcome.upper()
    letter = {"passed": ".", "failed": "F"}.get(report.outcome, "s")
    return report.outcome, letter, f"{word} (held {figures['held']} of {figures['counted']})"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    state = Stashed(config).sitting()
    if state is None:
        return
    lines = state.summary()
    if lines:
        terminalreporter.section("convy")
    for line in lines:
        terminalreporter.write_line(line)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = Stashed(session.config).sitting()
    if state is not None and exitstatus == 0 and not state.gated():
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
