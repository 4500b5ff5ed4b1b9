"""An agent URL with `user:password@` (docs/security.md, decision 50): httpx sends the pair as HTTP Basic
credentials; an agent whose error echoes the request's headers must not get the password, the pair
or its base64 form into attempts.jsonl, the report or the console."""

from __future__ import annotations

import base64
from pathlib import Path

from tests.servers.agents import AgentServer
from tests.support.command import convy, lines, only_run

PASSWORD = "hunter2-very-secret"
PAIR = f"dana:{PASSWORD}"


def test_a_url_password_and_its_basic_form_are_masked_everywhere(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s.yaml").write_text("name: s\nturns: [hi]\nchecks: [{contains: x}]\n")
    with AgentServer() as agent:
        url = agent.url.replace("http://", f"http://{PAIR}@") + "/echo-headers"
        # without a traceparent, the authorization header falls within the 300 characters of the
        # agent's message that are kept, so its masked form can be seen there
        done = convy("run", "--agent-url", url, "--repeat", "1", "--trace-context=false", cwd=tmp_path)
    basic = base64.b64encode(PAIR.encode()).decode()
    assert agent.requests and agent.requests[0].headers["authorization"] == f"Basic {basic}"
    [line] = lines(only_run(tmp_path / "results"))
    assert line["decision"]["reason"] == "http_500"  # type: ignore[index]
    assert "***" in line["decision"]["message"]  # type: ignore[index]
    shown = done.stdout + done.stderr
    for path in (tmp_path / "results").rglob("*"):
        if path.is_file():
            shown += path.read_text(errors="replace")
    for secret in (PASSWORD, PAIR, basic):
        assert secret not in shown
