"""Runs of made-up attempts, held or not, weighted or not."""

from __future__ import annotations

from convy.compare.summary import Summary, Summed
from convy.play.outcome import ClaimResult, Failed, NoVerdict, Outcome, Verdict
from convy.store.runfile import RunFile, RunSpec, ScenarioEntry

Said = bool | str | None
"""An attempt: held (True) or not (False), failed for a reason (a string), or no verdict (None)."""


def outcome(scenario: str, index: int, said: Said) -> Outcome:
    decision: Verdict | Failed | NoVerdict
    if said is None:
        decision = NoVerdict(reason="judge_failure")
    elif isinstance(said, str):
        decision = Failed(reason=said)
    else:
        decision = Verdict(holds=said, claims=(ClaimResult(claim="c", passed=said, reason="why"),))
    return Outcome(scenario=scenario, index=index, fingerprint="f", turns=(), seconds=1.0, decision=decision)


def run(attempts: dict[str, list[Said]], repeat: int = 3, max_repeat: int = 0) -> Summary:
    """A run of these attempts per scenario; `max_repeat` above `repeat` is a run with adaptive repeats."""
    spec = RunSpec(
        agent="a",
        repeat=repeat,
        max_repeat=max_repeat or repeat,
        scenarios=tuple(ScenarioEntry(name=name, fingerprint="f") for name in attempts),
    )
    outcomes = [outcome(name, i, said) for name, saids in attempts.items() for i, said in enumerate(saids)]
    return Summed(
        RunFile(format=2, spec=spec, status="finished", started="t"), "results/a/r", outcomes
    ).summary()


def held(count: int, of: int) -> list[Said]:
    return [True] * count + [False] * (of - count)
