"""Two runs of the demo's scenarios with their transcripts, and the comparison page of them."""

from __future__ import annotations

from convy.compare.comparison import Compared
from convy.compare.gate import Gate
from convy.compare.summary import Summary, Summed
from convy.draw.report import ComparisonPage
from convy.play.agent import Usage
from convy.play.outcome import ClaimResult, Failed, NoVerdict, Outcome, Turn, Verdict
from convy.store.runfile import RunFile, RunSpec, ScenarioEntry

ASKED = "I'm sorry about that. What is your order number?"
REFUNDED = (
    "I've checked order 4411: it was lost in transit. I've issued a full refund of $59.00 to your card."
)
CREDITED = (
    "I've checked order 4411: it was lost in transit. I've issued store credit of $59.00 to your account."
)
CLAIM = "The agent confirms the amount that will be refunded."

Held = bool | None | str
"""An attempt: it held or not (a verdict), None (no verdict), or the reason the agent failed."""


def attempt(scenario: str, index: int, held: Held, answers: tuple[str, ...]) -> Outcome:
    decision: Verdict | Failed | NoVerdict
    match held:
        case None:
            decision = NoVerdict(reason="judge_unreadable")
        case str(reason):
            decision = Failed(reason=reason, detail="the agent answered HTTP 500")
        case bool(holds):
            reason = "It says the refund is $59.00." if holds else "It offers store credit, not a refund."
            decision = Verdict(holds=holds, claims=(ClaimResult(claim=CLAIM, passed=holds, reason=reason),))
    users = ("My headphones never arrived.", "It's order 4411.", "Thanks!")
    turns = tuple(
        Turn(user=users[i % 3], agent=answer, seconds=0.2, usage=Usage(input=10, output=5))
        for i, answer in enumerate(answers)
    )
    return Outcome(
        scenario=scenario, index=index, fingerprint="f", turns=turns, seconds=1.0, decision=decision
    )


def run(
    results: dict[str, list[tuple[Held, tuple[str, ...]]]],
    folder: str,
    rejudged: frozenset[str] = frozenset(),
) -> tuple[Summary, list[Outcome]]:
    spec = RunSpec(
        agent="support",
        repeat=max(len(v) for v in results.values()),
        scenarios=tuple(ScenarioEntry(name=n, fingerprint="f", file=f"{n}.yaml", line=1) for n in results),
    )
    outcomes = [
        attempt(name, index, held, answers)
        for name, said in results.items()
        for index, (held, answers) in enumerate(said)
    ]
    file = RunFile(format=1, spec=spec, status="finished", started="2026-12-01T10:00:00Z")
    return Summed(file, folder, outcomes, rejudged=rejudged).summary(), outcomes


GOOD = (ASKED, REFUNDED, "You're welcome!")
BAD = (ASKED, CREDITED, "You're welcome!")
BEFORE: dict[str, list[tuple[Held, tuple[str, ...]]]] = {
    "refund-late-order": [(False, BAD), (True, GOOD), (True, GOOD), (True, GOOD), (True, GOOD)],
    "order-status": [(True, GOOD)] * 5,
}
NOW: dict[str, list[tuple[Held, tuple[str, ...]]]] = {
    "refund-late-order": [(None, GOOD), ("http_500", BAD[:1]), (False, BAD), (False, BAD), (False, BAD)],
    "order-status": [(True, GOOD)] * 5,
}


def page(
    before: dict[str, list[tuple[Held, tuple[str, ...]]]],
    now: dict[str, list[tuple[Held, tuple[str, ...]]]],
    rejudged: frozenset[str] = frozenset(),
) -> tuple[str, dict[str, str]]:
    """comparison.html of the two runs, and each scenario's status."""
    old, old_outcomes = run(before, "results/support/20261201T100000Z-aaaa", rejudged)
    new, new_outcomes = run(now, "results/support/20261202T100000Z-bbbb")
    comparison = Compared(new, old).comparison()
    decision = Gate().decision(comparison)
    html = ComparisonPage(comparison, decision, iter(new_outcomes), iter(old_outcomes)).html()
    return html, {s.name: s.status for s in comparison.scenarios}
