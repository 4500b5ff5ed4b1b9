"""Summary, comparison and gate over synthetic runs."""

from __future__ import annotations

import msgspec
import pytest

from convy.compare.comparison import Compared, NoBaseline, RunsDiffer
from convy.compare.gate import Gate
from convy.compare.statistics import PValue, Rate, Unknown
from convy.compare.summary import Summary, Summed
from convy.play.agent import Usage
from convy.play.outcome import ClaimResult, Failed, NoVerdict, Outcome, Turn, Verdict
from convy.store.runfile import RunFile, RunSpec, ScenarioEntry


def outcome(
    scenario: str, index: int, holds: bool | None, fingerprint: str = "f", reason: str = ""
) -> Outcome:
    decision: Verdict | Failed | NoVerdict
    if holds is None:
        decision = NoVerdict(reason=reason or "model_failure")
    elif reason:
        decision = Failed(reason=reason)
    else:
        decision = Verdict(holds=holds, claims=(ClaimResult(claim="c1", passed=holds, reason="why"),))
    turn = Turn(user="u", agent="a", seconds=0.5, usage=Usage(input=10, output=5))
    return Outcome(
        scenario=scenario,
        index=index,
        fingerprint=fingerprint,
        turns=(turn,),
        seconds=1.0 + index,
        decision=decision,
    )


def summary(
    results: dict[str, list[bool | None]],
    agent: str = "a",
    fingerprints: dict[str, str] | None = None,
) -> Summary:
    fingerprints = fingerprints or {}
    repeat = max(len(v) for v in results.values())
    spec = RunSpec(
        agent=agent,
        repeat=repeat,
        scenarios=tuple(
            ScenarioEntry(
                name=n,
                fingerprint=fingerprints.get(n, "f"),
                file=f"scenarios/{n}.yaml",
                line=1,
                claim_lines=(7,),
            )
            for n in results
        ),
    )
    outcomes = [
        outcome(n, i, h, fingerprints.get(n, "f")) for n, hs in results.items() for i, h in enumerate(hs)
    ]
    return Summed(
        RunFile(format=1, spec=spec, status="finished", started="t"), "results/a/r1", outcomes
    ).summary()


def test_the_summary_counts_held_of_judged_and_leaves_no_verdict_out() -> None:
    s = summary({"x": [True, True, False, None]})
    assert (s.tally.held, s.tally.judged, s.attempts) == (2, 3, 4)
    assert s.no_verdict[0].reason == "model_failure" and s.no_verdict_share.value == 0.25  # type: ignore[union-attr]
    assert isinstance(s.rate, Rate) and s.rate.value == pytest.approx(2 / 3)
    assert s.scenarios[0].failing[0].line == 7


def test_unknown_stays_unknown_when_nothing_was_judged() -> None:
    s = summary({"x": [None, None]})
    assert isinstance(s.rate, Unknown)
    decision = Gate().decision(Compared(s, NoBaseline()).comparison())
    assert decision.verdict == "inconclusive"


def test_token_spreads_are_medians_of_per_attempt_totals() -> None:
    s = summary({"x": [True, False, True]})
    assert s.agent_input_tokens.median == 10 and s.agent_input_tokens.count == 3
    assert s.judge_tokens.count == 0 and s.judge_tokens.median is None


def test_statuses_of_scenarios() -> None:
    base = summary(
        {
            "a": [True] * 5,
            "b": [True, False, True, False, True],
            "c": [True] * 5,
            "gone": [True] * 5,
            "same": [True] * 5,
        }
    )
    now = summary(
        {"a": [False] * 5, "b": [True] * 5, "c": [True] * 5, "new": [True] * 5, "same": [True] * 5},
        fingerprints={"c": "other"},
    )
    comparison = Compared(now, base).comparison()
    status = {s.name: s.status for s in comparison.scenarios}
    assert status == {
        "a": "regressed",
        "b": "higher",
        "c": "changed",
        "new": "new",
        "gone": "removed",
        "same": "unchanged",
    }
    assert comparison.ordered()[0].name == "a"
    assert isinstance(comparison.scenarios[0].p, PValue) and comparison.scenarios[0].p.value < 0.01


def test_a_real_drop_fails_the_gate_and_a_small_one_does_not() -> None:
    base = summary({f"s{i}": [True] * 6 for i in range(6)})
    worse = summary({f"s{i}": [True, False, False, True, False, False] for i in range(6)})
    decision = Gate().decision(Compared(worse, base).comparison())
    assert (decision.verdict, decision.rule) == ("fail", "max-drop")
    slightly = summary({f"s{i}": [True] * 6 if i else [True] * 5 + [False] for i in range(6)})
    assert Gate().decision(Compared(slightly, base).comparison()).verdict == "pass"


def test_a_large_but_not_significant_drop_passes_and_says_so() -> None:
    base = summary({"s": [True, True]})
    now = summary({"s": [True, False]})
    decision = Gate().decision(Compared(now, base).comparison())
    assert (decision.verdict, decision.rule) == ("pass", "not-significant")


def test_the_floor_fails_without_a_baseline() -> None:
    now = summary({"s": [True, False, False, False]})
    decision = Gate(min_pass_rate=0.5).decision(Compared(now, NoBaseline()).comparison())
    assert (decision.verdict, decision.rule, decision.exit_code) == ("fail", "min-pass-rate", 1)


def test_too_many_without_verdict_is_inconclusive_first() -> None:
    now = summary({"s": [None, None, False, False]})
    decision = Gate(min_pass_rate=0.9, max_no_verdict=0.2).decision(Compared(now, NoBaseline()).comparison())
    assert (decision.verdict, decision.exit_code) == ("inconclusive", 3)


def test_runs_of_different_agents_are_refused() -> None:
    with pytest.raises(RunsDiffer, match="different agents"):
        Compared(summary({"s": [True]}, agent="one"), summary({"s": [True]}, agent="two")).comparison()


def test_the_drop_is_over_common_unchanged_scenarios() -> None:
    base = summary({"s": [True] * 4, "t": [False] * 4})
    now = summary({"s": [True] * 4, "t": [True] * 4}, fingerprints={"t": "new-fp"})
    comparison = Compared(now, base).comparison()
    assert comparison.drop == 0.0 and (comparison.common_now.judged, comparison.common_baseline.judged) == (
        4,
        4,
    )
    assert msgspec.json.encode(comparison)
