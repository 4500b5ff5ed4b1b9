"""Scripted turns and checks: a scenario's script is said without a user model, checks are made
without a judge, and bad checks are exit 2 at their line. Requests are counted at the model and
agent stand-ins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from convy.errors import ConfigurationError
from convy.play.agent import Call, Thought
from convy.play.checks import Inspection
from convy.play.outcome import Turn
from convy.project.document import Document
from convy.project.scenario import Check
from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.command import convy, lines, only_run
from tests.support.scripted import project, run

SCRIPTED = """\
name: scripted
turns:
  - Where is order 4411?
  - I want a refund.
checks:
  - contains: "refund"
    in: last
  - not_contains: "sorry"
  - matches: "\\\\d{4}"
  - tool: lookup
"""


def judged(request: dict[str, Any]) -> str:
    if request.get("response_format"):
        text = request["messages"][-1]["content"]
        count = text.count("\n1. ") + text.count("\n2. ")
        return json.dumps({"decisions": [{"pass": True, "reason": "fine"}] * max(count, 1)})
    return "FINISHED"


def test_a_script_with_checks_and_no_brief_asks_no_model_and_says_each_turn_once(tmp_path: Path) -> None:
    folder = project(tmp_path, ("scripted", SCRIPTED))
    with AgentServer() as agent, ModelServer(judged) as models:
        done = run(folder, agent, models, "--repeat", "2")
        asked = len(models.requests)
        said = dict(agent.processed)
    assert done.returncode == 0, done.stderr
    assert asked == 0, "no user model and no judge is asked"
    assert said == {"Where is order 4411?": 2, "I want a refund.": 2}
    attempts = lines(only_run(folder / "results"))
    assert len(attempts) == 2
    for attempt in attempts:
        decision = attempt["decision"]
        assert isinstance(decision, dict) and decision["type"] == "verdict"
        assert [c["pass"] for c in decision["claims"]] == [True, True, True, True], decision
        assert decision["holds"] is True
        assert [t["user"] for t in attempt["turns"]] == ["Where is order 4411?", "I want a refund."]  # type: ignore[index]


def test_a_script_with_claims_asks_only_the_judge_once_per_transcript(tmp_path: Path) -> None:
    text = "turns: [Hello, Where is my order]\nclaims: [The agent answers.]\nchecks: [{contains: order}]\n"
    folder = project(tmp_path, ("judged", text))
    with AgentServer() as agent, ModelServer(judged) as models:
        done = run(folder, agent, models, "--user-model", "m", "--repeat", "3")
        requests = list(models.requests)
    assert done.returncode == 0, done.stderr
    assert len(requests) == 1 and all(r.get("response_format") for r in requests), "judge calls only"
    played = lines(only_run(folder / "results"))
    assert sum(line["reused"] is None for line in played) == 1, "3 attempts, one transcript: one verdict"
    decision = played[0]["decision"]
    assert isinstance(decision, dict)
    assert [c["claim"] for c in decision["claims"]] == ["The agent answers.", "contains 'order'"]


def test_a_brief_after_a_script_takes_over_and_checks_need_no_judge(tmp_path: Path) -> None:
    text = "user: You are Dana.\nturns: [Hi]\nmax_turns: 3\nchecks: [{contains: Hi}]\n"
    folder = project(tmp_path, ("both", text))
    answers = iter(["Thanks", "FINISHED"] * 4)
    with AgentServer() as agent, ModelServer(lambda request: next(answers)) as models:
        done = run(folder, agent, models, "--user-model", "m", "--repeat", "1")
        requests = list(models.requests)
    assert done.returncode == 0, done.stderr
    assert len(requests) == 2 and not any(r.get("response_format") for r in requests), "user model only"
    turns = lines(only_run(folder / "results"))[0]["turns"]
    assert [t["user"] for t in turns] == ["Hi", "Thanks"]  # type: ignore[index]


def test_a_failing_check_fails_the_attempt_and_is_shown_like_a_failing_claim(tmp_path: Path) -> None:
    text = "turns: [Hello]\nchecks:\n  - contains: refund\n  - not_contains: echo\n"
    folder = project(tmp_path, ("failing", text))
    with AgentServer() as agent, ModelServer(judged) as models:
        done = run(folder, agent, models, "--repeat", "2", "--min-pass-rate", "0.5")
    assert done.returncode == 1, done.stdout + done.stderr
    run_folder = only_run(folder / "results")
    decision = lines(run_folder)[0]["decision"]
    assert isinstance(decision, dict) and decision["holds"] is False
    assert [(c["claim"], c["pass"]) for c in decision["claims"]] == [
        ("contains 'refund'", False),
        ("does not contain 'echo'", False),
    ]
    comment = (run_folder / "comment.md").read_text()
    assert "contains 'refund'" in comment and "no answer has it" in comment
    assert "answer 1 has it" in comment
    assert "does not contain 'echo'" in (run_folder / "report.html").read_text()


def test_checks_look_at_the_last_answer_or_any_and_at_tool_steps() -> None:
    turns = (
        Turn(user="a", agent="Order 4411 found.", seconds=0.1, steps=(Call(name="lookup"),)),
        Turn(user="b", agent="Refund sent.", seconds=0.1, steps=(Thought(text="refund"),)),
    )
    results = Inspection(turns).results(
        (
            Check(contains="Order", within="last"),
            Check(contains="Order"),
            Check(matches=r"\d{4}", within="last"),
            Check(matches=r"\d{4}"),
            Check(tool="lookup"),
            Check(tool="lookup", within="last"),
            Check(tool="refund"),
            Check(not_contains="Refund", within="last"),
            Check(not_contains="sorry"),
        )
    )
    assert [r.passed for r in results] == [False, True, False, True, True, False, False, False, True]
    assert results[1].reason == "answer 1 has it" and results[7].reason == "answer 2 has it"
    assert Inspection(()).result(Check(not_contains="x")).reason == "the agent gave no answer"


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("turns: [Hi]\nchecks:\n  - matches: '(unclosed'\n", 3, "not a valid regular expression"),
        ("turns: [Hi]\nchecks:\n  - contains: a\n    tool: b\n", 3, "exactly one of"),
        ("turns: [Hi]\nchecks:\n  - {}\n", 3, "exactly one of"),
        ("turns: [Hi]\nchecks:\n  - contains: a\n    within: last\n", 4, "unknown key `within`"),
        (
            "turns: [Hi]\nchecks:\n  - contains: a\n    in: first\n",
            4,
            "'first' is not one of the allowed values: any, last",
        ),
        ("turns: [Hi]\nchecks: []\nclaims: []\n", 3, "at least one claim or check"),
        ("turns: [Hi, '  ']\nchecks: [{contains: a}]\n", 1, "`turns[1]` is empty"),
        ("opening: Hi\nturns: [Hi]\nchecks: [{contains: a}]\n", 2, "`turns` and `opening`"),
        ("turns: [a, b, c]\nmax_turns: 2\nchecks: [{contains: a}]\n", 2, "fewer than the 3 scripted"),
        ("checks: [{contains: a}]\n", 1, "`user` is missing"),
    ],
)
def test_a_bad_script_or_check_is_a_configuration_error_at_its_line(
    tmp_path: Path, text: str, line: int, fragment: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigurationError) as raised:
        Document(path, tmp_path).declarations()
    assert raised.value.where == f"bad.yaml:{line}", raised.value
    assert fragment in raised.value.message


def test_an_invalid_regular_expression_is_exit_2_naming_file_and_line_before_any_request(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path, ("bad", "turns: [Hi]\nchecks:\n  - contains: a\n  - matches: '[a-'\n"))
    with AgentServer() as agent, ModelServer(judged) as models:
        done = run(folder, agent, models)
        asked = len(models.requests) + len(agent.requests)
    assert done.returncode == 2
    assert "scenarios/bad.yaml:4" in done.stderr and "regular expression" in done.stderr
    assert asked == 0


def test_a_project_of_scripts_and_checks_runs_with_no_model_settings_at_all(tmp_path: Path) -> None:
    folder = project(tmp_path, ("scripted", SCRIPTED))
    with AgentServer() as agent:
        done = convy("run", "--repeat", "1", cwd=folder, env={"AGENT_URL": agent.url})
        said = sum(agent.processed.values())
    assert done.returncode == 0, done.stderr
    assert said == 2
    assert lines(only_run(folder / "results"))[0]["decision"]["holds"] is True  # type: ignore[index]
