"""A model that cannot be reached is a setup mistake (the first hour): connection refused of the
user model, the judge or a panel member stops the run after that one attempt, naming `model-url`,
`judge-url` or the member, as a model 401 does; `patience` waits only for a service that answered
busy. Against a closed loopback port, with real servers for the rest."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from convy.play.agent import Message
from convy.play.busy import Patience, Places
from convy.play.model import ModelFailure, OpenAiModel, PatientModel
from convy.play.rate import Pace
from tests.clock import VirtualTime
from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.command import convy
from tests.support.command import lines as attempts
from tests.support.command import only_run as one_run
from tests.support.setup_project import closed_port

VERDICT = json.dumps({"decisions": [{"pass": True, "reason": "it helped"}]})


def project(folder: Path, scenario: str) -> Path:
    (folder / "scenarios").mkdir(parents=True)
    for n in range(3):
        (folder / "scenarios" / f"s{n}.yaml").write_text(f"name: s{n}\n{scenario}")
    return folder


def test_a_closed_port_fails_at_once_while_patience_is_left_for_a_busy_service() -> None:
    async def asked() -> tuple[ModelFailure, float]:
        loop = asyncio.get_running_loop()
        async with httpx.AsyncClient() as client:
            model = OpenAiModel(
                url=f"http://127.0.0.1:{closed_port()}/v1",
                key="",
                name="m",
                client=client,
                setting="judge-url",
            )
            patient = PatientModel(model, Places(2, Pace(0), Patience(300)))
            with pytest.raises(ModelFailure) as failed:
                await patient.reply((Message(role="user", content="hello"),))
        return failed.value, loop.time()

    failure, waited = VirtualTime().run(asked())
    assert failure.kind == "unreachable"
    assert "connection refused" in str(failure) and str(failure).endswith("check judge-url")
    assert waited < 1, f"waited {waited:g} s of the event loop's clock for a service that is not there"


def test_a_user_model_on_a_closed_port_stops_the_run_and_names_model_url(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "user: You are Dana.\nclaims: [It helps.]\n")
    url = f"http://127.0.0.1:{closed_port()}/v1"
    with AgentServer() as agent:
        done = convy(
            "run",
            *("--agent-url", f"{agent.url}/ok", "--model-url", url, "--user-model", "m"),
            *("--concurrency", "2", "--repeat", "3"),
            cwd=root,
        )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "the user model was not reached" in done.stdout and "check model-url" in done.stdout
    assert url in done.stdout
    assert agent.requests == []
    folder = one_run(root / "results")
    assert json.loads((folder / "run.json").read_text())["status"] == "stopped"
    assert len(attempts(folder)) == 1, "the run stops after the attempt that found it"


def test_a_judge_on_a_closed_port_names_judge_url(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "turns: [hello]\nclaims: [It helps.]\n")
    with AgentServer() as agent, ModelServer(lambda request: VERDICT) as models:
        done = convy(
            "run",
            *("--agent-url", f"{agent.url}/ok", "--model-url", models.url, "--user-model", "m"),
            *("--judge-url", f"http://127.0.0.1:{closed_port()}/v1", "--judge-key", "sk-judge-0000"),
            *("--concurrency", "1", "--repeat", "3"),
            cwd=root,
        )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "the judge model was not reached" in done.stdout and "check judge-url" in done.stdout
    # the first agent answer lets the next attempt start while the judge is asked: at most that one
    assert len(agent.requests) <= 2 and models.requests == []
    assert "sk-judge-0000" not in done.stdout + done.stderr


def test_a_panel_member_on_a_closed_port_is_named(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "turns: [hello]\nclaims: [It helps.]\n")
    with AgentServer() as agent, ModelServer(lambda request: VERDICT) as judge:
        member = (
            f"[{{model: panel-b, url: 'http://127.0.0.1:{closed_port()}/v1', key: PANEL_B_KEY}},"
            f" {{model: panel-c, url: '{judge.url}', key: PANEL_B_KEY}}]"
        )
        done = convy(
            "run",
            *("--agent-url", f"{agent.url}/ok", "--model-url", judge.url, "--user-model", "judge-a"),
            *("--judge-panel", member, "--concurrency", "1", "--repeat", "3"),
            cwd=root,
            env={"PANEL_B_KEY": "sk-panel-b-0000"},
        )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "judge-panel's member `panel-b`" in done.stdout
    assert len(agent.requests) <= 2
