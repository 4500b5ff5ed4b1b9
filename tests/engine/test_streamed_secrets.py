"""Every secret masked on every error path: an agent whose streamed error — AG-UI's RUN_ERROR, the
Vercel AI UI message stream's `error` part — echoes the agent file's header token must not get it
into attempts.jsonl, report.html, comment.md or the console, as an HTTP 500 body echoing it does
not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.servers.agents import AgentServer
from tests.support.firsthour import attempts, convy, one_run

TOKEN = "tok-3f9a-very-secret-agent-token"


@pytest.mark.parametrize(
    ("path", "protocol", "reason"),
    [
        ("/agui-echo-headers", "ag-ui", "run_failed"),
        ("/vercel-echo-headers", "vercel-ai", "stream_broken"),
        ("/echo-headers", "openai-chat", "http_500"),
    ],
)
def test_a_streamed_error_echoing_the_header_token_is_masked_everywhere(
    tmp_path: Path, path: str, protocol: str, reason: str
) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "agents").mkdir()
    for n in range(2):
        (tmp_path / "scenarios" / f"s{n}.yaml").write_text(
            f"name: s{n}\nturns: [hi]\nchecks: [{{contains: x}}]\n"
        )
    with AgentServer() as agent:
        (tmp_path / "agents" / "bot.yaml").write_text(
            f"url: {agent.url}{path}\nprotocol: {protocol}\nheaders:\n  Authorization: Bearer {TOKEN}\n"
        )
        done = convy("run", "--repeat", "2", "--trace-context=false", cwd=tmp_path)
    assert agent.requests and agent.requests[0].headers["authorization"] == f"Bearer {TOKEN}"
    folder = one_run(tmp_path / "results")
    found = attempts(folder)
    assert found and {line["decision"]["reason"] for line in found} == {reason}  # type: ignore[index]
    assert all("***" in str(line["decision"]) for line in found), "the agent's words are kept, masked"
    assert (folder / "comment.md").exists() and (folder / "report.html").exists()
    shown = done.stdout + done.stderr
    for written in (tmp_path / "results").rglob("*"):
        if written.is_file():
            shown += written.read_text(errors="replace")
    assert TOKEN not in shown
