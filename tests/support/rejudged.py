"""A project of one scenario played twice by the `convy` command, and its runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.command import convy


def project(folder: Path, text: str) -> Path:
    (folder / "scenarios").mkdir(parents=True, exist_ok=True)
    (folder / "scenarios" / "greet.yaml").write_text(text)
    return folder


def runs(folder: Path) -> list[Path]:
    return sorted((folder / "results" / "agent").iterdir())


def played(folder: Path, agent: AgentServer, models: ModelServer, *extra: str) -> Any:
    return convy(
        "run",
        "--agent-url",
        f"{agent.url}/ok",
        "--model-url",
        models.url,
        "--model-key",
        "sk-test-key-1",
        "--judge-model",
        "judge-a",
        "--repeat",
        "2",
        *extra,
        cwd=folder,
    )
