"""Shared fixtures: the environment cleared of settings, and a copy of the demo project."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

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
