"""A project with an agent file and scenarios, played by the `convy` command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.command import convy

AGENT = "url: ${AGENT_URL}/ok\nsteps: trace\n"


def project(folder: Path, *scenarios: tuple[str, str]) -> Path:
    (folder / "scenarios").mkdir(parents=True)
    (folder / "agents").mkdir()
    (folder / "agents" / "bot.yaml").write_text(AGENT)
    for name, text in scenarios:
        (folder / "scenarios" / f"{name}.yaml").write_text(text)
    return folder


def run(folder: Path, agent: AgentServer, models: ModelServer, *extra: str) -> Any:
    return convy(
        "run",
        "--model-url",
        models.url,
        "--model-key",
        "sk-test-key-123",
        *extra,
        cwd=folder,
        env={"AGENT_URL": agent.url},
    )
