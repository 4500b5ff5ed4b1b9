"""Settings said wrong are said so (the first hour): a `CONVY_*` variable that names no setting is
warned about with the nearest setting, in the command's stderr and in the action's log and step
summary; an invalid choice lists the allowed values; help text shows "95%"."""

from __future__ import annotations

import io
from pathlib import Path

from convy_action.action import Action
from convy_action.github.retries import Retries
from tests.support.command import convy

STRAY = "`CONVY_MIN_PASS` is not a setting: did you mean `CONVY_MIN_PASS_RATE`?"
FAST = Retries(attempts=3, first_wait=0.01, longest_wait=2.0, total_wait=5.0, secondary_wait=0.01)


def test_a_misspelt_variable_is_warned_about_with_the_nearest_setting(tmp_path: Path) -> None:
    done = convy("report", cwd=tmp_path, env={"CONVY_MIN_PASS": "0.9", "CONVY_MIN_PASS_RATE": "0.5"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"convy: warning: {STRAY}\n" in done.stderr
    assert "CONVY_MIN_PASS_RATE`" not in done.stderr.replace(STRAY, ""), "a setting's own is no stray"


def test_the_action_warns_in_its_log_and_its_step_summary(tmp_path: Path) -> None:
    out = io.StringIO()
    summary = tmp_path / "summary.md"
    environ = {"CONVY_MIN_PASS": "0.9", "GITHUB_STEP_SUMMARY": str(summary)}
    code = Action(["--dry-run", "--demo", "--repeat", "1"], environ, out, tmp_path, FAST).exit_code()
    assert code == 0, out.getvalue()
    assert f"warning: {STRAY}" in out.getvalue()
    assert STRAY in summary.read_text()


def test_an_invalid_protocol_lists_every_protocol_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "agents").mkdir()
    (tmp_path / "scenarios" / "s.yaml").write_text("name: s\nturns: [hi]\nchecks: [{contains: x}]\n")
    (tmp_path / "agents" / "bot.yaml").write_text("url: http://127.0.0.1:9/x\nprotocol: langgraf\n")
    done = convy("run", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "agents/bot.yaml:2" in done.stderr and "'langgraf' is not one of" in done.stderr
    for protocol in ("openai-chat", "openai-responses", "a2a", "ag-ui", "vercel-ai", "langgraph", "adk"):
        assert protocol in done.stderr
    assert "Invalid enum value" not in done.stderr


def test_calibrate_help_says_95_percent_once(tmp_path: Path) -> None:
    done = convy("calibrate", "--help", cwd=tmp_path, env={"COLUMNS": "300"})
    assert done.returncode == 0
    assert "95% bootstrap" in done.stdout and "%%" not in done.stdout
