"""Shared fixtures: the environment cleared of settings, a copy of the demo project, and agno's
AgentOS started once per session."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers.agno_server import AGNO, AgnoOs

DEMO = Path(__file__).resolve().parent.parent / "src" / "convy" / "demo" / "project"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No CONVY_*, INPUT_* or GITHUB_* variable of the machine reaches a test."""
    import os

    for name in list(os.environ):
        if name.startswith(("CONVY_", "INPUT_", "GITHUB_", "ACTIONS_", "RUNNER_")):
            monkeypatch.delenv(name)


@pytest.fixture
def demo_project(tmp_path: Path) -> Iterator[Path]:
    """A writable copy of the bundled demo project."""
    target = tmp_path / "project"
    shutil.copytree(DEMO, target)
    yield target


@pytest.fixture(scope="session")
def agno_os() -> Iterator[AgnoOs]:
    """agno's AgentOS (A2A), started once for the session; skipped only outside CI when agno's own
    virtual environment was never made."""
    import os

    if not AgnoOs.installed():
        if os.environ.get("CI") or os.environ.get("TEST_AGNO"):
            pytest.fail(f"agno is not installed at {AGNO}: .ci/run installs it")
        pytest.skip(f"agno is not installed at {AGNO}: make .venv-agno as .ci/run does")
    with AgnoOs() as server:
        yield server
