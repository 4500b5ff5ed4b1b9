"""A made-up attempt: one turn with a tool call and a thought, and its decision."""

from __future__ import annotations

from convy.play.agent import Call, Thought, Usage
from convy.play.outcome import ClaimResult, Failed, NoVerdict, Outcome, Turn, Verdict


def outcome(
    scenario: str, index: int, holds: bool | None, answer: str = "Fine.", usage: Usage | None = None
) -> Outcome:
    decision: Verdict | Failed | NoVerdict
    if holds is None:
        decision = NoVerdict(reason="model_failure")
    else:
        decision = Verdict(
            holds=holds,
            claims=(
                ClaimResult(claim="It helps.", passed=holds, reason="Seen."),
                ClaimResult(claim="contains 'order'", passed=True, reason="answer 1 has it", check=True),
            ),
        )
    steps = (Call(name="lookup", arguments="{}", result="ok"), Thought(text="hm"))
    turn = Turn(user="Hello?", agent=answer, seconds=0.25, usage=usage, steps=steps)
    return Outcome(
        scenario=scenario, index=index, fingerprint="f", turns=(turn,), seconds=0.5, decision=decision
    )
