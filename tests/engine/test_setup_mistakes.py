"""Setup mistakes say so at once (docs/gate.md): the first attempt that cannot reach the agent, or
that the agent refuses as such (401, 403, 404, 405), stops the run while no attempt has reached the
agent's logic; the headline names the setting to check with the URL; those attempts are
`not_delivered`, and `convy resume` plays them again once the setting is fixed, a later line
superseding the `not_delivered` one. A model that refuses its key (401) stops the run the same way."""

from __future__ import annotations

import json
from pathlib import Path

from tests.servers.agents import AgentServer
from tests.servers.models import Canned, ModelServer
from tests.support.command import convy, lines, only_run
from tests.support.setup_project import closed_port, project


def test_a_refused_connection_stops_at_once_and_a_resume_with_the_right_url_recovers(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    wrong = f"http://127.0.0.1:{closed_port()}/ok"
    done = convy("run", "--agent-url", wrong, "--concurrency", "1", "--repeat", "3", cwd=root)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "agent-url" in done.stdout and wrong in done.stdout
    folder = only_run(root / "results")
    recorded = json.loads((folder / "run.json").read_text())
    assert recorded["status"] == "stopped"
    first = lines(folder)
    assert 1 <= len(first) < 9
    assert {line["decision"]["reason"] for line in first} == {"not_delivered"}  # type: ignore[index]
    with AgentServer() as agent:
        resumed = convy("resume", str(folder), "--agent-url", f"{agent.url}/ok", cwd=root)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert len(agent.requests) == 9, "every attempt is played: those not delivered again, the rest anew"
    assert "second line" not in resumed.stderr
    assert json.loads((folder / "run.json").read_text())["status"] == "finished"
    report = convy("report", str(folder), cwd=root)
    assert report.returncode == 0 and "second line" not in report.stderr


def test_a_404_names_the_url_and_stops_before_the_other_attempts(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    with AgentServer() as agent:
        url = f"{agent.url}/no-such-route"
        done = convy("run", "--agent-url", url, "--concurrency", "1", "--repeat", "3", cwd=root)
    assert done.returncode == 1
    assert len(agent.requests) == 1
    assert url in done.stdout and "HTTP 404" in done.stdout and "check agent-url" in done.stdout
    [line] = lines(only_run(root / "results"))
    assert line["decision"]["reason"] == "not_delivered" and line["decision"]["status"] == 404  # type: ignore[index]


def test_an_agent_that_answered_once_is_not_stopped_by_a_later_404(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    (root / "scenarios" / "s1.yaml").write_text("name: s1\nturns: [hello]\nchecks: [{contains: echo}]\n")
    with AgentServer() as agent:
        done = convy("run", "--agent-url", f"{agent.url}/ok", "--concurrency", "1", "--repeat", "2", cwd=root)
    assert done.returncode == 0
    assert json.loads((only_run(root / "results") / "run.json").read_text())["status"] == "finished"


def test_a_model_that_refuses_its_key_stops_the_run_and_names_model_key(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "scenarios").mkdir(parents=True)
    for n in range(3):
        (root / "scenarios" / f"s{n}.yaml").write_text(
            f"name: s{n}\nuser: You are Dana.\nclaims: [It helps.]\n"
        )
    refused = Canned(401, {"error": {"message": "Incorrect API key provided: sk-wr***"}})
    with AgentServer() as agent, ModelServer(lambda request: refused) as models:
        done = convy(
            "run",
            "--agent-url",
            f"{agent.url}/ok",
            "--model-url",
            models.url,
            "--model-key",
            "sk-wrong-key-0000",
            "--user-model",
            "m",
            "--concurrency",
            "1",
            "--repeat",
            "3",
            cwd=root,
        )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "check model-key" in done.stdout and "Incorrect API key" in done.stdout
    assert len(models.requests) == 1 and agent.requests == []
    assert "sk-wrong-key-0000" not in done.stdout + done.stderr
