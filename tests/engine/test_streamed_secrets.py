"""Every secret masked on every error path: an agent whose streamed error — AG-UI's RUN_ERROR, the
Vercel AI UI message stream's `error` part — echoes the agent file's header token must not get it
into attempts.jsonl, report.html, comment.md, the console or the action's log and step summary, as
an HTTP 500 body echoing it does not."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from convy_action.action import Action
from convy_action.github.retries import Retries
from tests.servers.agents import AgentServer
from tests.support.command import convy
from tests.support.command import lines as attempts
from tests.support.command import only_run as one_run

TOKEN = "tok-3f9a-very-secret-agent-token"
FAST = Retries(attempts=3, first_wait=0.01, longest_wait=2.0, total_wait=5.0, secondary_wait=0.01)


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


def test_the_action_s_log_and_step_summary_never_show_the_streamed_token(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "agents").mkdir()
    (tmp_path / "scenarios" / "s.yaml").write_text("name: s\nturns: [hi]\nchecks: [{contains: x}]\n")
    summary = tmp_path / "summary.md"
    out = io.StringIO()
    with AgentServer() as agent:
        (tmp_path / "agents" / "bot.yaml").write_text(
            f"url: {agent.url}/agui-echo-headers\nprotocol: ag-ui\n"
            f"headers:\n  Authorization: Bearer {TOKEN}\n"
        )
        argv = ["--dry-run", "--repeat", "2", "--trace-context", "false"]
        code = Action(argv, {"GITHUB_STEP_SUMMARY": str(summary)}, out, tmp_path, FAST).exit_code()
    assert code == 1, out.getvalue()
    assert "run\\_failed" in summary.read_text(), "the summary says what failed"
    assert TOKEN not in out.getvalue() + summary.read_text()
