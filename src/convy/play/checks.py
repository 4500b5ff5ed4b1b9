"""A scenario's checks made on a dialogue, without a model: each check's result a ClaimResult,
listed after the judge's decisions on the claims."""

from __future__ import annotations

import msgspec

from convy.play.agent import Call
from convy.play.outcome import ClaimResult, Turn
from convy.project.pattern import Pattern
from convy.project.scenario import Check


class Inspection(msgspec.Struct, frozen=True):
    """The agent's answers and steps of one dialogue, for its checks."""

    turns: tuple[Turn, ...]

    def results(self, checks: tuple[Check, ...]) -> tuple[ClaimResult, ...]:
        """One result per check, in order."""
        return tuple(self.result(check) for check in checks)

    def result(self, check: Check) -> ClaimResult:
        """Whether `check` passes on the dialogue, and a one-line reason naming the answer."""
        turns = self.turns[-1:] if check.within == "last" else self.turns
        numbers = range(len(self.turns) - len(turns) + 1, len(self.turns) + 1)
        pattern = Pattern(check.matches)
        found = [
            number for number, turn in zip(numbers, turns, strict=True) if self.found(check, turn, pattern)
        ]
        absent = "the last answer does not have it" if check.within == "last" else "no answer has it"
        match check.kind:
            case "not_contains":
                passed = not found
                reason = absent if passed else f"answer {found[0]} has it"
            case "tool":
                passed = bool(found)
                where = "in the last turn" if check.within == "last" else "in any turn"
                reason = f"called in turn {found[0]}" if passed else f"no call of {check.tool} {where}"
            case _:
                passed = bool(found)
                reason = f"answer {found[0]} has it" if passed else absent
        if not self.turns:
            reason = "the agent gave no answer"
        return ClaimResult(claim=check.text(), passed=passed, grade=None, reason=reason, check=True)

    def found(self, check: Check, turn: Turn, pattern: Pattern) -> bool:
        """Whether the turn has what the check looks for (for `not_contains`: has the text)."""
        match check.kind:
            case "matches":
                return pattern.search(turn.agent)
            case "tool":
                return any(isinstance(step, Call) and step.name == check.tool for step in turn.steps)
            case _:
                return check.value in turn.agent
