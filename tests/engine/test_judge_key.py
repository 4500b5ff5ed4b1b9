"""judge-key (docs/security.md): model-key goes to the judge only when judge-url is unset or on the same
origin as model-url; a judge on another host without its own key is exit 2 before any request, so a
key is never sent to another provider's host."""

from __future__ import annotations

from pathlib import Path

from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.command import convy

KEY = "sk-model-key-never-elsewhere"
SCENARIO = "name: hello\nuser: You are Dana.\nclaims: [It greets.]\n"


def project(folder: Path) -> Path:
    (folder / "scenarios").mkdir(parents=True)
    (folder / "scenarios" / "hello.yaml").write_text(SCENARIO)
    return folder


def test_a_judge_on_another_host_without_its_own_key_is_exit_2_before_any_request(tmp_path: Path) -> None:
    with (
        AgentServer() as agent,
        ModelServer(lambda r: "FINISHED") as models,
        ModelServer(lambda r: "x") as judge,
    ):
        done = convy(
            "run",
            "--agent-url",
            f"{agent.url}/ok",
            "--model-url",
            models.url,
            "--model-key",
            KEY,
            "--user-model",
            "m",
            f"--judge-url={judge.url}",
            cwd=project(tmp_path),
        )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "judge-key" in done.stderr
    assert judge.requests == [] and models.requests == [] and agent.requests == []
    assert KEY not in done.stdout + done.stderr


def test_a_judge_on_the_same_origin_takes_model_key(tmp_path: Path) -> None:
    replies = iter(["Hi!", "FINISHED"])

    def answer(request: dict[str, object]) -> str:
        if request.get("response_format") or request.get("model") == "j":
            return '{"decisions": [{"pass": true, "reason": "It did."}]}'
        return next(replies)

    with AgentServer() as agent, ModelServer(answer) as models:
        done = convy(
            "run",
            "--agent-url",
            f"{agent.url}/ok",
            "--model-url",
            models.url,
            "--model-key",
            KEY,
            "--user-model",
            "m",
            "--judge-model",
            "j",
            f"--judge-url={models.url}/",
            "--repeat",
            "1",
            cwd=project(tmp_path),
        )
    assert done.returncode == 0, done.stdout + done.stderr
    judged = [h for r, h in zip(models.requests, models.headers, strict=True) if r.get("model") == "j"]
    assert judged and all(h["authorization"] == f"Bearer {KEY}" for h in judged)
