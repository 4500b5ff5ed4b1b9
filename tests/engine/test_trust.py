"""A verdict a team can trust on its first real run (DESIGN §13.2): the gate's order with max-failed,
exact arithmetic for the drop, the drop over exactly the scenarios the test uses, and the statuses
regressed / lower / improved / higher / not played — over synthetic runs and end to end against the
real local servers."""

from __future__ import annotations

import json
from pathlib import Path

from convy.compare.comparison import Compared, NoBaseline
from convy.compare.gate import Gate
from convy.compare.summary import Summary, Summed
from convy.play.outcome import ClaimResult, Failed, NoVerdict, Outcome, Turn, Verdict
from convy.store.journal import RunFile, RunSpec, ScenarioEntry
from tests.engine.test_cli import convy, only_run

Attempt = bool | None | str
"""It held or not (a verdict), None (no verdict), or the reason the agent failed."""


def outcome(scenario: str, index: int, held: Attempt) -> Outcome:
    decision: Verdict | Failed | NoVerdict
    match held:
        case None:
            decision = NoVerdict(reason="judge_failure", detail="judge: HTTP 500", status=500, message="boom")
        case str(reason):
            decision = Failed(reason=reason, status=400, message="Invalid model name")
        case bool(holds):
            decision = Verdict(holds=holds, claims=(ClaimResult(claim="c", passed=holds, reason="because"),))
    return Outcome(
        scenario=scenario,
        index=index,
        fingerprint="f",
        turns=(Turn(user="u", agent="a", seconds=0.5),),
        seconds=1.0,
        decision=decision,
    )


def summary(results: dict[str, list[Attempt]], left_out: tuple[str, ...] = ()) -> Summary:
    spec = RunSpec(
        agent="a",
        repeat=max(len(v) for v in results.values()),
        scenarios=tuple(ScenarioEntry(name=n, fingerprint="f") for n in results),
        left_out=left_out,
    )
    outcomes = [outcome(n, i, h) for n, hs in results.items() for i, h in enumerate(hs)]
    return Summed(RunFile(format=1, spec=spec, status="finished", started="t"), "r/a/1", outcomes).summary()


def decide(now: Summary, before: Summary | NoBaseline, gate: Gate | None = None) -> tuple[str, str, str]:
    gate = gate or Gate()
    decision = gate.decision(Compared(now, before, gate.alpha).comparison())
    return decision.verdict, decision.rule, decision.cause


def test_an_agent_failing_every_attempt_fails_without_a_baseline_naming_reason_and_message() -> None:
    verdict, rule, cause = decide(summary({"s": ["http_400"] * 3}), NoBaseline())
    assert (verdict, rule) == ("fail", "max-failed")
    assert cause == "http_400 ×3 (HTTP 400): Invalid model name"


def test_the_gate_order_inconclusive_then_failed_then_floor_then_drop() -> None:
    # too many without verdict wins over the agent's failures
    assert decide(summary({"s": [None, None, "http_500", True]}), NoBaseline())[:2] == (
        "inconclusive",
        "max-no-verdict",
    )
    # nothing judged at all
    verdict, rule, cause = decide(summary({"s": [None, None]}), NoBaseline())
    assert (verdict, rule) == ("inconclusive", "no-verdicts") and cause == "judge_failure ×2 (HTTP 500): boom"
    # failed share before the floor
    assert (
        decide(summary({"s": ["timeout", True, False, False]}), NoBaseline(), Gate(min_pass_rate=0.9))[1]
        == "max-failed"
    )
    # max-failed is exact: 1 of 10 failed is not more than 0.1
    one_in_ten = summary({"s": ["timeout"] + [True] * 9})
    assert decide(one_in_ten, NoBaseline())[:2] == ("pass", "floor-only")
    assert decide(one_in_ten, NoBaseline(), Gate(max_failed=0.09))[1] == "max-failed"
    # the floor before the drop
    before = summary({f"s{i}": [True] * 6 for i in range(6)})
    worse = summary({f"s{i}": [True, False, False, True, False, False] for i in range(6)})
    assert decide(worse, before, Gate(min_pass_rate=0.5))[1] == "min-pass-rate"
    assert decide(worse, before)[:2] == ("fail", "max-drop")


def test_a_drop_of_exactly_max_drop_is_not_more_than_it() -> None:
    # 14/100 -> 9/100 over one scenario would be 0.14 - 0.09 > 0.05 in floating point
    before = summary({"s": [True] * 14 + [False] * 86})
    now = summary({"s": [True] * 9 + [False] * 91})
    comparison = Compared(now, before).comparison()
    assert 0.14 - 0.09 > 0.05 and comparison.drop is not None
    assert comparison.exact_drop() * 20 == 1  # type: ignore[operator]
    gate = Gate(max_drop=0.05, alpha=0.99)
    decision = gate.decision(comparison)
    assert (decision.verdict, decision.rule) == ("pass", "within-max-drop")
    assert Gate(max_drop=0.049, alpha=0.99).decision(comparison).rule == "max-drop"


def test_the_drop_is_over_the_scenarios_judged_in_both_runs_only() -> None:
    before = summary({"kept": [True] * 4, "unjudged-now": [False] * 4})
    now = summary({"kept": [True, True, True, False], "unjudged-now": [None] * 4})
    comparison = Compared(now, before).comparison()
    assert (comparison.common_now.judged, comparison.common_baseline.judged) == (4, 4)
    assert comparison.exact_drop() == 0.25


def test_statuses_regressed_lower_improved_higher() -> None:
    before = summary({"big": [True] * 5, "small": [True] * 3, "up": [False] * 5, "bit": [False] * 3})
    now = summary(
        {"big": [False] * 5, "small": [True, True, False], "up": [True] * 5, "bit": [True] + [False] * 2}
    )
    statuses = {s.name: s.status for s in Compared(now, before).comparison().scenarios}
    assert statuses == {"big": "regressed", "small": "lower", "up": "improved", "bit": "higher"}


def test_one_flaky_attempt_is_lower_not_a_regression_and_the_gate_passes() -> None:
    before = summary({"s": [True] * 3, "t": [True] * 3})
    now = summary({"s": [True, True, False], "t": [True] * 3})
    gate = Gate()
    comparison = Compared(now, before).comparison()
    decision = gate.decision(comparison)
    assert decision.verdict == "pass" and decision.regressions(comparison) == ()
    assert [s.name for s in decision.within_noise(comparison)] == ["s"]


def test_scenarios_left_out_by_match_are_not_played_not_removed() -> None:
    before = summary({"a": [True] * 3, "b": [True] * 3, "gone": [True] * 3})
    now = summary({"a": [True] * 3}, left_out=("b",))
    statuses = {s.name: s.status for s in Compared(now, before).comparison().scenarios}
    assert statuses == {"a": "unchanged", "b": "not played", "gone": "removed"}


HELLO = "user: Say hello.\nopening: hi\nclaims: [The agent answers.]\n"


def decided(request: dict[str, object]) -> str:
    return '{"decisions": [{"pass": true, "reason": "ok"}]}' if request.get("response_format") else "FINISHED"


def test_a_broken_agent_fails_convy_run_on_max_failed_end_to_end(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "hello.yaml").write_text(HELLO)
    with AgentServer() as agent, ModelServer(decided) as models:
        done = convy(
            "run",
            "--agent-url",
            f"{agent.url}/status/400",
            "--model-url",
            models.url,
            "--model-key",
            "sk-test-key-123",
            "--user-model",
            "m",
            "--repeat",
            "2",
            "--fail-fast",
            "false",
            cwd=tmp_path,
        )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "max-failed" in done.stdout and "http_400" in done.stdout


def test_match_then_compare_shows_not_played_end_to_end(tmp_path: Path) -> None:
    assert convy("run", "--demo", cwd=tmp_path).returncode == 0
    first = only_run(tmp_path / "results")
    done = convy("run", "--demo", "--match", "order-status", "--baseline", str(first), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    second = next(p for p in (tmp_path / "results" / "support").iterdir() if p != first)
    spec = json.loads((second / "run.json").read_text())["spec"]
    assert "refund-late-order" in spec["left_out"]
    comment = (second / "comment.md").read_text()
    assert "not played" in comment and "removed" not in comment
