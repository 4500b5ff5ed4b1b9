"""A scenario's checks made on a dialogue, without a model: each check's result a ClaimResult,
listed after the judge's decisions on the claims."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from convy.play.agent import Call
from convy.play.outcome import ClaimResult, Turn
from convy.project.pattern import Pattern
from convy.project.scenario import ArgumentMatch, Check, ExpectedCall
from convy.project.written import FunctionCheck


class Inspection(msgspec.Struct, frozen=True):
    """The agent's answers and steps of one dialogue, for its checks."""

    turns: tuple[Turn, ...]

    def results(self, checks: tuple[Check, ...]) -> tuple[ClaimResult, ...]:
        """One result per check, in order."""
        return tuple(self.result(check) for check in checks)

    def result(self, check: Check) -> ClaimResult:
        """Whether `check` passes on the dialogue, and a one-line reason naming the answer."""
        if isinstance(check, FunctionCheck):
            return Asked(check=check).result(Talked(self.turns))
        turns = self.turns[-1:] if check.within == "last" else self.turns
        numbers = range(len(self.turns) - len(turns) + 1, len(self.turns) + 1)
        pattern = Pattern(check.matches)
        found = [
            number for number, turn in zip(numbers, turns, strict=True) if self.found(check, turn, pattern)
        ]
        absent = "the last answer does not have it" if check.within == "last" else "no answer has it"
        where = "in the last turn" if check.within == "last" else "in any turn"
        match check.kind:
            case "not_contains":
                passed = not found
                reason = absent if passed else f"answer {found[0]} has it"
            case "tool":
                passed = bool(found)
                reason = f"called in turn {found[0]}" if passed else f"no call of {check.call.name} {where}"
            case "not_tool":
                passed = not found
                reason = f"no call of {check.not_tool} {where}" if passed else f"called in turn {found[0]}"
            case "tools":
                numbered = tuple(zip(numbers, turns, strict=True))
                passed, reason = ToolOrder(tools=check.tools).followed(numbered)
            case _:
                passed = bool(found)
                reason = f"answer {found[0]} has it" if passed else absent
        if not self.turns:
            reason = "the agent gave no answer"
        return ClaimResult(claim=check.text(), passed=passed, grade=None, reason=reason, check=True)

    def found(self, check: Check, turn: Turn, pattern: Pattern) -> bool:
        """Whether the turn has what the check looks for (for `not_contains`: has the text; for
        `not_tool`: calls the tool)."""
        match check.kind:
            case "matches":
                return pattern.search(turn.agent)
            case "tool":
                return any(isinstance(step, Call) and Called(step).matches(check.call) for step in turn.steps)
            case "not_tool":
                return any(isinstance(step, Call) and step.name == check.not_tool for step in turn.steps)
            case "tools":
                return False
            case _:
                return check.value in turn.agent


class Called(msgspec.Struct, frozen=True):
    """A tool call the agent reported, its arguments read as JSON (a JSON string holding JSON is
    read again)."""

    call: Call

    def arguments(self) -> dict[str, object]:
        """The call's arguments by name; empty when they are not a JSON object."""
        read: object = self.call.arguments
        for _ in range(2):
            if not isinstance(read, str):
                break
            try:
                read = msgspec.json.decode(read)
            except msgspec.DecodeError:
                return {}
        return {str(key): value for key, value in read.items()} if isinstance(read, dict) else {}

    def matches(self, wanted: ExpectedCall) -> bool:
        """Whether this is a call of `wanted`'s tool with each of its arguments among its own."""
        if self.call.name != wanted.name:
            return False
        if not wanted.args:
            return True
        given = self.arguments()
        return all(key in given and Argued(value=given[key]).fits(want) for key, want in wanted.args.items())


class Argued(msgspec.Struct, frozen=True):
    """One argument's value as the agent gave it."""

    value: object

    def text(self) -> str:
        """The value as text: a string as it is, anything else as JSON."""
        return self.value if isinstance(self.value, str) else msgspec.json.encode(self.value).decode()

    def fits(self, wanted: object) -> bool:
        """Whether the value is `wanted` (a string also matches a number or true/false written the
        same), or matches it when it is an ArgumentMatch."""
        if isinstance(wanted, ArgumentMatch):
            return Pattern(wanted.matches).search(self.text())
        if self.value == wanted and type(self.value) is type(wanted):
            return True
        scalar = not isinstance(self.value, dict | list)
        return isinstance(wanted, str) and scalar and self.text() == wanted


class ToolOrder(msgspec.Struct, frozen=True):
    """Tools that must be called in this order, other calls between them allowed."""

    tools: tuple[str, ...]

    def followed(self, turns: tuple[tuple[int, Turn], ...]) -> tuple[bool, str]:
        """Whether the turns' calls, in order, hold the tools in this order; why."""
        wanted = list(self.tools)
        at: list[int] = []
        for number, turn in turns:
            for step in turn.steps:
                if wanted and isinstance(step, Call) and step.name == wanted[0]:
                    wanted.pop(0)
                    at.append(number)
        if not wanted:
            return True, "called in this order in turns " + ", ".join(str(n) for n in at)
        missing = wanted[0]
        if len(wanted) == len(self.tools):
            return False, f"no call of {missing}"
        return False, f"no call of {missing} after {self.tools[len(self.tools) - len(wanted) - 1]}"


class Talked(msgspec.Struct, frozen=True):
    """An attempt's dialogue as a check written in Python reads it: its turns in order (each with
    `user`, `agent` and `steps`), by index or one after another, or as `turns`."""

    turns: tuple[Turn, ...]

    def __len__(self) -> int:
        return len(self.turns)

    def __iter__(self) -> Iterator[Turn]:
        return iter(self.turns)

    def __getitem__(self, index: int) -> Turn:
        return self.turns[index]

    @property
    def agent(self) -> tuple[str, ...]:
        """The agent's answers, in order."""
        return tuple(turn.agent for turn in self.turns)


class Asked(msgspec.Struct, frozen=True):
    """A check written in Python, asked about one dialogue: its answer read as a result, an
    exception inside it as a failed check (never the run's)."""

    check: FunctionCheck

    def result(self, dialogue: Talked) -> ClaimResult:
        passed, reason = self.answer(dialogue)
        return ClaimResult(claim=self.check.name, passed=passed, grade=None, reason=reason, check=True)

    def answer(self, dialogue: Talked) -> tuple[bool, str]:
        try:
            said = self.check.function(dialogue)
        except AssertionError as error:
            # its first line: the message (pytest's rewritten asserts explain it on further lines)
            return False, str(error).partition("\n")[0] or "assertion failed"
        except Exception as error:  # the user's code: any error fails this check, never the run
            return False, f"{type(error).__name__}: {error}"
        match said:
            case None | True:
                return True, "passed"
            case False:
                return False, "returned False"
            case str():
                return False, said or "returned an empty message"
            case _:
                return bool(said), f"returned {type(said).__name__}"
