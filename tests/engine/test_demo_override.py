"""The failing example of docs/comment.md is one command: agent-answer (and agent-body) given
without agent-url say over the agent file's — `--demo --agent-answer reply.message` plays the demo's
bot reading a path its answers do not have, and the gate fails on it."""

from __future__ import annotations

from pathlib import Path

from tests.support.command import convy, lines, only_run


def test_a_wrong_answer_path_over_the_demo_s_agent_fails_the_run(tmp_path: Path) -> None:
    done = convy("run", "--demo", "--agent-answer", "reply.message", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "max-failed" in done.stdout and "reply.message" in done.stdout
    reasons = {line["decision"]["reason"] for line in lines(only_run(tmp_path / "results"))}  # type: ignore[index]
    assert reasons == {"bad_answer"}


def test_a_bad_answer_path_is_exit_2_naming_the_setting(tmp_path: Path) -> None:
    done = convy("run", "--demo", "--agent-answer", "reply..text", cwd=tmp_path)
    assert done.returncode == 2 and "agent-answer" in done.stderr
