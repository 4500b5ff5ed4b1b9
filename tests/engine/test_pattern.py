"""A scenario's `matches` checks run on RE2 (decision 26): a pattern that makes a backtracking engine
run for ever (`(a+)+$` against forty `a` and a `!` takes Python's `re` about 2^40 steps) is decided
at once, so the run ends; what RE2 cannot run (backreferences, lookaround) is exit 2 at the
check's line, and RE2 writes nothing of its own on the console."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from convy.play.checks import Inspection
from convy.play.outcome import Turn
from convy.project.pattern import Pattern
from convy.project.scenario import Check
from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.command import only_run
from tests.support.scripted import project, run

HOSTILE = "a" * 40 + "!"


def test_a_catastrophic_pattern_is_decided_without_backtracking() -> None:
    check = Check(matches="(a+)+$")
    result = Inspection((Turn(user="u", agent=HOSTILE, seconds=0.1),)).result(check)
    assert result.passed is False
    assert result.reason == "no answer has it"
    assert Pattern("(a+)+!$").search(HOSTILE)


def test_a_run_with_a_catastrophic_check_ends_and_records_the_check(tmp_path: Path) -> None:
    scenario = f'name: hostile\nturns: ["{HOSTILE}"]\nchecks:\n  - matches: "(a+)+$"\n'
    folder = project(tmp_path / "p", ("hostile", scenario))
    with AgentServer() as agent, ModelServer(lambda request: "FINISHED") as models:
        done = run(folder, agent, models, "--repeat", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    [line] = [
        json.loads(text)
        for text in (only_run(folder / "results") / "attempts.jsonl").read_text().splitlines()
    ]
    assert line["decision"]["type"] == "verdict"
    assert line["decision"]["claims"] == [
        {
            "claim": "matches /(a+)+$/",
            "pass": False,
            "grade": None,
            "reason": "no answer has it",
            "check": True,
        }
    ]


@pytest.mark.parametrize("expression", ["(?<=order )\\d+", "(a)\\1"])
def test_what_re2_cannot_run_is_a_configuration_error_at_its_line(
    tmp_path: Path, expression: str, capfd: pytest.CaptureFixture[str]
) -> None:
    folder = project(tmp_path / "p", ("s", f"name: s\nturns: [hi]\nchecks:\n  - matches: '{expression}'\n"))
    with AgentServer() as agent, ModelServer(lambda request: "FINISHED") as models:
        done = run(folder, agent, models)
    assert done.returncode == 2
    assert "scenarios/s.yaml:4" in done.stderr + done.stdout
    assert "RE2" in done.stderr + done.stdout
    assert "absl" not in done.stderr and "re2.cc" not in done.stderr
    assert agent.requests == []
    Pattern(expression).problem()
    assert capfd.readouterr().err == ""
