"""How one scenario did in a run, as its pytest item reports it: passed, failed (with each failing
attempt's claims and checks, the judge's reasons and the last two turns), an error (no verdict at
all), or not played; and the figures its report carries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import msgspec

import convy
from convy.play.outcome import Failed, NoVerdict, Turn, Verdict
from convy.tools import Untrusted

Kind = Literal["passed", "failed", "error", "skipped"]

SAID = 300
"""Characters of a turn's message shown in a failed item's report."""


class ItemResult(msgspec.Struct, frozen=True, kw_only=True):
    """An item's result: its kind, the text its report shows, and its figures: attempts `held` of
    those `counted` (judged, or failed on the agent's side), every attempt, and the run folder."""

    kind: Kind
    text: str = ""
    held: int = 0
    counted: int = 0
    attempts: int = 0
    folder: str = ""

    @classmethod
    def unplayable(cls, why: str) -> ItemResult:
        """An item whose run could not be played (a mistake in the settings or the agent file)."""
        return cls(kind="error", text=why)

    @classmethod
    def of(cls, outcomes: Sequence[convy.Outcome], status: str, floor: float, folder: str) -> ItemResult:
        """The result of a scenario's `outcomes` in a run: passed when every counted attempt held,
        or (`floor` above 0) at least that share did, and it did not regress (`status`) against the
        baseline."""
        judged = [o for o in outcomes if isinstance(o.decision, Verdict)]
        failed = [o for o in outcomes if isinstance(o.decision, Failed)]
        held = sum(1 for o in judged if isinstance(o.decision, Verdict) and o.decision.holds)
        counted = len(judged) + len(failed)
        figures = {"held": held, "counted": counted, "attempts": len(outcomes), "folder": folder}
        if not outcomes:
            return cls(
                kind="skipped",
                text="convy: not played in this run (the run stopped, or another shard plays it)",
                folder=folder,
            )
        if not counted:
            reasons = sorted({Because(decision=o.decision).text() for o in outcomes})
            return cls(kind="error", text="convy: no verdict: " + "; ".join(reasons), **figures)  # type: ignore[arg-type]
        passed = held == counted or (floor > 0 and held >= floor * counted)
        if passed and status != "regressed":
            return cls(kind="passed", **figures)  # type: ignore[arg-type]
        lines = [f"convy: held {held} of {counted}" + (f" ({floor:.0%} needed)" if floor > 0 else "")]
        if status == "regressed":
            lines.append("regressed against the baseline")
        for outcome in outcomes:
            lines += AttemptReasons(outcome=outcome).lines()
        return cls(kind="failed", text="\n".join(lines), **figures)  # type: ignore[arg-type]


class AttemptReasons(msgspec.Struct, frozen=True):
    """Why one attempt did not hold: its failing claims and checks with their reasons, or the
    agent's failure, then its last two turns; nothing for an attempt that held."""

    outcome: convy.Outcome

    def lines(self) -> list[str]:
        decision = self.outcome.decision
        head = f"attempt {self.outcome.index + 1}:"
        match decision:
            case Verdict(holds=True) | NoVerdict():
                return []
            case Failed():
                found = [f"{head} the agent failed: {self.shown(Because(decision=decision).text())}"]
            case Verdict():
                found = [head] + [
                    f"  {'check' if claim.checked else 'claim'}: {self.shown(claim.claim)}"
                    + (f" [{claim.grade}]" if claim.grade else "")
                    + f" — {self.shown(claim.reason)}"
                    for claim in decision.claims
                    if not claim.passed
                ]
        return found + [line for turn in self.outcome.turns[-2:] for line in self.turn(turn)]

    def turn(self, turn: Turn) -> list[str]:
        return [f"    user: {self.shown(turn.user)}", f"    agent: {self.shown(turn.agent)}"]

    def shown(self, text: str) -> str:
        return Untrusted(text=text).console(SAID)


class Because(msgspec.Struct, frozen=True):
    """Why an attempt has no verdict, or failed on the agent's side: its reason and detail."""

    decision: Verdict | Failed | NoVerdict

    def text(self) -> str:
        match self.decision:
            case Verdict():
                return "judged"
            case Failed() | NoVerdict() as why:
                return why.reason + (f" ({why.detail})" if why.detail else "")
