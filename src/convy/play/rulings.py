"""What a judge model reads and what it answers: the dialogue and the claims as the judge's prompt
shows them; its reply, with a reasoning block and a code fence taken off, read ruling by ruling,
each made a ClaimResult; and what a scenario's claims allow a verdict to be.

What cannot be read is a ModelFailure (`unreadable`) saying why."""

from __future__ import annotations

import hashlib
import itertools
import re

import msgspec

from convy.play import prompts
from convy.play.model import ModelFailure
from convy.play.outcome import ClaimResult, Turn, Verdict
from convy.project.scenario import Claim, Graded
from convy.words import Plural


class Transcript(msgspec.Struct, frozen=True):
    """A dialogue as the judge reads it: `User: ...` and `Agent: ...`, one message after the other;
    further lines of a message are indented, so none can pass for a message of its own; between two
    boundary lines that occur nowhere in it."""

    turns: tuple[Turn, ...]

    def boundary(self) -> str:
        """A BOUNDARY line for this transcript that occurs nowhere inside it: its mark is made from
        a hash of the transcript, so its messages cannot know it (the same transcript, the same
        boundary: requests stay alike for every vote and every cache)."""
        text = self.text()
        for salt in itertools.count():
            mark = hashlib.sha256(f"{salt}\n{text}".encode()).hexdigest()[:16]
            line = prompts.BOUNDARY.substitute(mark=mark)
            if line not in text:
                return line
        raise AssertionError("unreachable")

    def text(self) -> str:
        if not self.turns:
            return prompts.EMPTY_TRANSCRIPT
        return "\n".join(
            prompts.LINE.substitute(
                speaker=speaker, text=said.strip().replace("\n", "\n" + prompts.CONTINUATION)
            )
            for turn in self.turns
            for speaker, said in ((prompts.USER_SPEAKER, turn.user), (prompts.AGENT_SPEAKER, turn.agent))
        )


class ClaimList(msgspec.Struct, frozen=True):
    """A scenario's claims as the judge reads them: numbered, verbatim, in order, each graded claim
    with its grades and whether each passes."""

    claims: tuple[Claim, ...]

    def text(self) -> str:
        return "\n".join(self.item(number, claim) for number, claim in enumerate(self.claims, start=1))

    def item(self, number: int, claim: Claim) -> str:
        match claim:
            case Graded(claim=text, grades=grades):
                shown = ", ".join(
                    prompts.GRADE.substitute(grade=grade, passes=str(passes).lower())
                    for grade, passes in grades.items()
                )
                return prompts.GRADED_CLAIM.substitute(number=number, claim=text, grades=shown)
            case str(text):
                return prompts.CLAIM.substitute(number=number, claim=text)


class Ruling(msgspec.Struct, frozen=True):
    """One decision of the judge model's answer, as it wrote it (`"pass": "true"` is read as true)."""

    passed: bool | str | None = msgspec.field(default=None, name="pass")
    grade: str | None = None
    reason: str = ""

    def result(self, number: int, claim: Claim) -> ClaimResult:
        """The decision on `claim` (the `number`-th); a grade given for a plain claim is dropped
        (models add "n/a"), a graded claim's grade is matched regardless of case and its missing
        `pass` is the grade's. ModelFailure (`unreadable`) when `pass` is not a boolean."""
        match claim:
            case Graded(claim=text, grades=grades):
                grade = self.grade
                if grade is not None and grade not in grades:
                    grade = next(
                        (known for known in grades if known.casefold() == grade.strip().casefold()), grade
                    )
                passed = self.boolean(number)
                if passed is None and grade in grades:
                    passed = grades[grade]
                if passed is None:
                    raise ModelFailure(f'decision {number} has no "pass"', kind="unreadable")
                return ClaimResult(claim=text, passed=passed, grade=grade, reason=self.reason.strip())
            case str(text):
                passed = self.boolean(number)
                if passed is None:
                    raise ModelFailure(f'decision {number} has no "pass"', kind="unreadable")
                return ClaimResult(claim=text, passed=passed, grade=None, reason=self.reason.strip())

    def boolean(self, number: int) -> bool | None:
        match self.passed:
            case bool(passed):
                return passed
            case str(text) if text.strip().casefold() in ("true", "false"):
                return text.strip().casefold() == "true"
            case None:
                return None
            case _:
                raise ModelFailure(
                    f'decision {number}\'s "pass" is {self.passed!r}, not true or false', kind="unreadable"
                )


class Rulings(msgspec.Struct, frozen=True):
    """The judge model's answer: `{"decisions": [...]}`."""

    decisions: tuple[Ruling, ...]


FENCE = re.compile(r"^```[\w-]*[ \t]*\n(.*?)\n?```$", re.DOTALL)
THINKING = re.compile(r"^<think>.*?</think>", re.DOTALL)


class Unwrapped(msgspec.Struct, frozen=True):
    """A judge's reply as text, with a leading reasoning block (`<think>…</think>`) and a surrounding
    code fence taken off; read as Rulings, also from its first `{` to its last `}` when there is
    text around the object."""

    text: str

    def json(self) -> str:
        text = THINKING.sub("", self.text.strip(), count=1).strip()
        fenced = FENCE.match(text)
        return fenced.group(1).strip() if fenced else text

    def rulings(self) -> Rulings:
        """The answer; ModelFailure (`unreadable`) saying why it is not the JSON asked for."""
        text = self.json()
        try:
            return msgspec.json.decode(text, type=Rulings)
        except msgspec.DecodeError as error:
            start, end = text.find("{"), text.rfind("}")
            if 0 <= start < end and (start, end) != (0, len(text) - 1):
                try:
                    return msgspec.json.decode(text[start : end + 1], type=Rulings)
                except msgspec.DecodeError:
                    pass
            raise ModelFailure(f"it is not the JSON asked for ({error})", kind="unreadable") from None


class Allowed(msgspec.Struct, frozen=True):
    """What a scenario's claims allow a verdict to be."""

    claims: tuple[Claim, ...]

    def check(self, verdict: Verdict) -> None:
        """ModelFailure (`unreadable`) naming the first thing in `verdict` the scenario does not allow."""
        claims = self.claims
        if len(verdict.claims) != len(claims):
            raise ModelFailure(
                f"the judge decided {Plural(len(verdict.claims), 'claim').text()} of {len(claims)}",
                kind="unreadable",
            )
        for number, (claim, result) in enumerate(zip(claims, verdict.claims, strict=True), start=1):
            match claim:
                case Graded(claim=text, grades=grades):
                    if result.claim != text:
                        raise ModelFailure(
                            f"decision {number} is not about claim {number}", kind="unreadable"
                        )
                    if result.grade is None:
                        raise ModelFailure(
                            f"claim {number} is graded, but its decision has no grade", kind="unreadable"
                        )
                    if result.grade not in grades:
                        raise ModelFailure(
                            f"claim {number}'s grade {result.grade!r} is not one of {', '.join(grades)}",
                            kind="unreadable",
                        )
                    if result.passed != grades[result.grade]:
                        wanted = str(grades[result.grade]).lower()
                        raise ModelFailure(
                            f"claim {number}: grade {result.grade!r} means pass is {wanted},"
                            f" the judge said {str(result.passed).lower()}",
                            kind="unreadable",
                        )
                case str(text):
                    if result.claim != text:
                        raise ModelFailure(
                            f"decision {number} is not about claim {number}", kind="unreadable"
                        )
                    if result.grade is not None:
                        raise ModelFailure(
                            f"claim {number} is not graded, but its decision has a grade", kind="unreadable"
                        )
        if verdict.holds != all(result.passed for result in verdict.claims):
            raise ModelFailure("the verdict's `holds` disagrees with its claims", kind="unreadable")
