"""Made-up runs summed, and a comparison of two decided by a gate."""

from __future__ import annotations

from convy.compare.comparison import Compared, Comparison, NoBaseline
from convy.compare.gate import Gate, GateDecision
from convy.compare.summary import Summary, Summed
from convy.play.agent import Usage
from convy.play.outcome import ClaimResult, Failed, NoVerdict, Outcome, Turn, Verdict
from convy.store.runfile import RunFile, RunSpec, ScenarioEntry, Status

Attempt = bool | None | str
"""An attempt: it held or not (a verdict), None (no verdict), or the reason the agent failed."""


def attempt(scenario: str, index: int, held: Attempt, claim: str, reason: str) -> Outcome:
    decision: Verdict | Failed | NoVerdict
    match held:
        case None:
            decision = NoVerdict(reason="model_failure")
        case str(failure):
            decision = Failed(reason=failure)
        case bool(holds):
            claims = (
                ClaimResult(claim="The agent greets the user.", passed=True, reason="it did"),
                ClaimResult(claim=claim, passed=holds, reason="" if holds else reason),
            )
            decision = Verdict(holds=holds, claims=claims)
    turn = Turn(user="u", agent="a", seconds=0.5, usage=Usage(input=100, output=40))
    return Outcome(
        scenario=scenario, index=index, fingerprint="f", turns=(turn,), seconds=2.0 + index, decision=decision
    )


def run(
    results: dict[str, list[Attempt]],
    *,
    agent: str = "support",
    claim: str = "The agent asks for the order number.",
    reason: str = "It never asked for the order number.",
    status: Status = "finished",
) -> Summary:
    repeat = max(len(v) for v in results.values())
    spec = RunSpec(
        agent=agent,
        repeat=repeat,
        scenarios=tuple(ScenarioEntry(name=n, fingerprint="f", line=1, claim_lines=(3, 4)) for n in results),
    )
    outcomes = [attempt(n, i, h, claim, reason) for n, hs in results.items() for i, h in enumerate(hs)]
    file = RunFile(format=1, spec=spec, status=status, started="t")
    return Summed(file, "results/support/r1", outcomes).summary()


def judged(
    now: Summary, baseline: Summary | NoBaseline, gate: Gate | None = None
) -> tuple[Comparison, GateDecision]:
    gate = gate or Gate()
    comparison = Compared(now, baseline, gate.alpha).comparison()
    return comparison, gate.decision(comparison)


A_DROP = (
    run({"refund": [True, False, False], "address": [True, True, True], "greet": [True, True, True]}),
    run({"refund": [True, True, True], "address": [True, True, True], "greet": [True, True, True]}),
)
