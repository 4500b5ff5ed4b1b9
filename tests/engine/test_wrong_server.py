"""A preset at the wrong server says so (the first hour): `protocol: langgraph` or `adk` whose
first request (the thread or the session made) is answered 404 says the URL is no LangGraph (ADK)
server and to check the agent file's url and protocol — not a `session.start` the file has none
of."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.servers.agents import AgentServer
from tests.support.command import convy


@pytest.mark.parametrize(
    ("protocol", "extra", "name"),
    [("langgraph", "", "LangGraph"), ("adk", "app: shop\nuser: dana\n", "ADK")],
)
def test_a_preset_answered_404_names_the_server_it_is_not(
    tmp_path: Path, protocol: str, extra: str, name: str
) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "agents").mkdir()
    (tmp_path / "scenarios" / "s.yaml").write_text("name: s\nturns: [hi]\nchecks: [{contains: x}]\n")
    with AgentServer() as agent:
        (tmp_path / "agents" / "bot.yaml").write_text(f"url: {agent.url}\nprotocol: {protocol}\n{extra}")
        done = convy("run", "--repeat", "2", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "check the agent file's url and protocol" in done.stdout
    assert f"no {name} server" in done.stdout and "HTTP 404" in done.stdout
    assert "session.start" not in done.stdout
