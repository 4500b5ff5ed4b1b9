"""Never green on nothing (docs/gate.md): an attempt whose simulated user finished before the agent
was asked anything is not judged (`no_dialogue`, the user model's), and a run in which no judged
attempt held fails (`nothing-held`) whatever the floor, with or without a baseline."""

from __future__ import annotations

from pathlib import Path

from convy.compare.comparison import NO_BASELINE, Compared
from convy.compare.gate import Gate
from convy.play.outcome import NoVerdict
from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.command import convy, lines, only_run
from tests.support.model_attempt import JUDGED, played
from tests.support.summaries import run


def test_a_user_who_finishes_at_once_leaves_no_dialogue_and_the_judge_is_not_asked() -> None:
    asked: list[object] = []

    def judge(request: object) -> str:
        asked.append(request)
        return JUDGED

    decision = played(lambda request: "FINISHED", judge)
    assert isinstance(decision, NoVerdict)
    assert decision.reason == "no_dialogue"
    assert asked == []


def test_a_run_where_nothing_held_fails_without_a_baseline_and_with_no_floor() -> None:
    gate = Gate(min_pass_rate=0.0, max_failed=1.0, max_no_verdict=0.5)
    now = run({"a": [False, False], "b": [False, None]})
    comparison = Compared(now, NO_BASELINE, gate.alpha).comparison()
    decision = gate.decision(comparison)
    assert (decision.verdict, decision.rule, decision.exit_code) == ("fail", "nothing-held", 1)
    assert decision.explanation == "none of the 3 judged attempts held"


def test_one_judged_attempt_is_said_in_the_singular() -> None:
    gate = Gate(max_no_verdict=1.0)
    decision = gate.decision(Compared(run({"a": [False, None]}), NO_BASELINE, gate.alpha).comparison())
    assert decision.explanation == "none of the 1 judged attempt held"


def test_one_held_attempt_is_enough_for_the_rule_not_to_decide() -> None:
    gate = Gate()
    decision = gate.decision(Compared(run({"a": [False, True, False]}), NO_BASELINE, gate.alpha).comparison())
    assert decision.rule != "nothing-held"


def test_users_who_all_finish_at_once_make_the_run_inconclusive_not_green(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    scenario = "name: hello\nuser: You are Dana.\nclaims: [It greets.]\n"
    (tmp_path / "scenarios" / "hello.yaml").write_text(scenario)
    with AgentServer() as agent, ModelServer(lambda request: "FINISHED") as models:
        done = convy(
            "run",
            "--agent-url",
            f"{agent.url}/ok",
            "--model-url",
            models.url,
            "--model-key",
            "sk-test-key-123",
            "--user-model",
            "m",
            "--repeat",
            "2",
            cwd=tmp_path,
        )
    assert done.returncode == 3, done.stdout + done.stderr
    assert agent.requests == []
    assert {line["decision"]["reason"] for line in lines(only_run(tmp_path / "results"))} == {"no_dialogue"}
    assert len([r for r in models.requests if r.get("response_format")]) == 0
