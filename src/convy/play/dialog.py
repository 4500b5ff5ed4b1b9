"""The simulated user (SimulatedUser) and its moves, Said and Finished; the judge interface Judge,
what a judge gives back (Decided: a Verdict with the judge's token usage), ChatJudge, a judge that
asks a model, and Checked, which turns any error or wrong answer of a judge into ModelFailure and
gives a judge only what was said; the texts they build from the prompts: Transcript, ClaimList."""

from __future__ import annotations

from typing import Protocol

import msgspec

from convy.data import Data
from convy.play import prompts
from convy.play.agent import Message, Usage
from convy.play.model import Model, ModelFailure
from convy.play.outcome import ClaimResult, Turn, Verdict
from convy.project.scenario import Claim, Graded, Scenario


class Said(Data, frozen=True, kw_only=True):
    """The simulated user's next message, and the tokens its model reported for it (None for the
    scenario's opening, which no model wrote, or when the model did not say)."""

    text: str
    usage: Usage | None = None


class Finished(Data, frozen=True, kw_only=True):
    """The simulated user ended the dialogue (satisfied, or gave up), with the tokens its model
    reported for saying so."""

    usage: Usage | None = None


class SimulatedUser(msgspec.Struct, frozen=True):
    """The scenario's user, played by a model: it sees the brief as its system message and the
    dialogue with roles swapped — the agent's messages are `user`, its own (the opening included)
    are `assistant`."""

    model: Model
    scenario: Scenario

    def messages(self, turns: tuple[Turn, ...]) -> tuple[Message, ...]:
        """The request for the user's next message: the system brief, then the dialogue."""
        system = Message(
            role="system",
            content=prompts.USER_SYSTEM.substitute(brief=self.scenario.user, finished=prompts.FINISHED),
        )
        dialogue = tuple(
            message
            for turn in turns
            for message in (
                Message(role="assistant", content=turn.user),
                Message(role="user", content=turn.agent),
            )
        )
        return (system, *dialogue)

    async def next(self, turns: tuple[Turn, ...]) -> Said | Finished:
        """The user's move after `turns`: its next message (trimmed), or Finished when the model's
        reply is exactly FINISHED. The scenario's scripted turns (or its opening) are said first
        without asking the model; after them, a scenario without a brief is Finished. An empty reply
        is a ModelFailure; the model's own errors come out as they are."""
        script = self.scenario.script
        if len(turns) < len(script):
            return Said(text=script[len(turns)])
        if not self.scenario.simulated:
            return Finished()
        reply = await self.model.reply(self.messages(turns))
        text = reply.text.strip()
        if not text:
            raise ModelFailure("the simulated user's reply is empty")
        if text == prompts.FINISHED:
            return Finished(usage=reply.usage)
        return Said(text=text, usage=reply.usage)

    async def first(self) -> Said | Finished:
        """The user's first move: the opening, else the model's first message."""
        return await self.next(())


class Decided(Data, frozen=True, kw_only=True):
    """What a judge gives back: its Verdict, and the tokens its model reported (None: unknown)."""

    verdict: Verdict
    usage: Usage | None = None


class Judge(Protocol):
    """Decides each of a scenario's claims on a dialogue."""

    async def decide(self, claims: tuple[Claim, ...], turns: tuple[Turn, ...]) -> Decided:
        """One ClaimResult per claim, in order; ModelFailure when it cannot decide."""
        ...


class Transcript(msgspec.Struct, frozen=True):
    """A dialogue as the judge reads it: `User: ...` and `Agent: ...`, one message after the other;
    further lines of a message are indented, so none can pass for a message of its own."""

    turns: tuple[Turn, ...]

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
    """One decision of the judge model's answer, as it wrote it."""

    passed: bool = msgspec.field(name="pass")
    grade: str | None = None
    reason: str = ""

    def result(self, claim: Claim) -> ClaimResult:
        """The decision on `claim`; a grade given for a plain claim is dropped (models add "n/a")."""
        match claim:
            case Graded(claim=text):
                return ClaimResult(
                    claim=text, passed=self.passed, grade=self.grade, reason=self.reason.strip()
                )
            case str(text):
                return ClaimResult(claim=text, passed=self.passed, grade=None, reason=self.reason.strip())


class Rulings(msgspec.Struct, frozen=True):
    """The judge model's answer: `{"decisions": [...]}`."""

    decisions: tuple[Ruling, ...]


class ChatJudge(msgspec.Struct, frozen=True):
    """A judge that asks a model, once per attempt, with `response_format: json_object`, for one
    decision per claim. The model's answer is read as it was written; Checked tells whether it is
    one the scenario allows."""

    model: Model

    def messages(self, claims: tuple[Claim, ...], turns: tuple[Turn, ...]) -> tuple[Message, ...]:
        """The judge's request: the fixed system text, then the claims and the transcript."""
        return (
            Message(role="system", content=prompts.JUDGE_SYSTEM.substitute()),
            Message(
                role="user",
                content=prompts.JUDGE_REQUEST.substitute(
                    count=len(claims), claims=ClaimList(claims).text(), transcript=Transcript(turns).text()
                ),
            ),
        )

    async def decide(self, claims: tuple[Claim, ...], turns: tuple[Turn, ...]) -> Decided:
        reply = await self.model.reply(self.messages(claims, turns), json=True)
        try:
            answer = msgspec.json.decode(reply.text, type=Rulings)
        except msgspec.DecodeError as error:
            raise ModelFailure(f"the judge's answer is not the JSON asked for: {error}") from None
        if len(answer.decisions) != len(claims):
            raise ModelFailure(f"the judge gave {len(answer.decisions)} decisions for {len(claims)} claims")
        results = tuple(
            decision.result(claim) for decision, claim in zip(answer.decisions, claims, strict=True)
        )
        return Decided(
            verdict=Verdict(holds=all(result.passed for result in results), claims=results),
            usage=reply.usage,
        )


class Checked(msgspec.Struct, frozen=True):
    """The same judge, given only what was said (no steps, no usage), and held to the scenario:
    any error it raises, and any answer that is not exactly one result per claim, in order, with the
    claim's text — a graded claim with one of its grades and the `pass` that grade maps to, a plain
    claim with no grade — and `holds` true exactly when every claim passes, is a ModelFailure
    saying what was wrong. Its answer is encoded and decoded as the run's folder will do."""

    judge: Judge

    async def decide(self, claims: tuple[Claim, ...], turns: tuple[Turn, ...]) -> Decided:
        said = tuple(msgspec.structs.replace(turn, steps=(), usage=None) for turn in turns)
        try:
            answer = await self.judge.decide(claims, said)
        except ModelFailure:
            raise
        except Exception as error:
            raise ModelFailure(f"the judge raised {type(error).__name__}: {error}") from error
        try:
            decided = msgspec.json.decode(msgspec.json.encode(answer), type=Decided)
        except (msgspec.EncodeError, msgspec.DecodeError, TypeError) as error:
            raise ModelFailure(f"the judge's answer cannot be stored: {error}") from None
        self.check(claims, decided.verdict)
        return decided

    def check(self, claims: tuple[Claim, ...], verdict: Verdict) -> None:
        """ModelFailure naming the first thing in `verdict` the scenario does not allow."""
        if len(verdict.claims) != len(claims):
            raise ModelFailure(f"the judge decided {len(verdict.claims)} claims of {len(claims)}")
        for number, (claim, result) in enumerate(zip(claims, verdict.claims, strict=True), start=1):
            match claim:
                case Graded(claim=text, grades=grades):
                    if result.claim != text:
                        raise ModelFailure(f"decision {number} is not about claim {number}")
                    if result.grade is None:
                        raise ModelFailure(f"claim {number} is graded, but its decision has no grade")
                    if result.grade not in grades:
                        raise ModelFailure(
                            f"claim {number}'s grade {result.grade!r} is not one of {', '.join(grades)}"
                        )
                    if result.passed != grades[result.grade]:
                        wanted = str(grades[result.grade]).lower()
                        raise ModelFailure(
                            f"claim {number}: grade {result.grade!r} means pass is {wanted},"
                            f" the judge said {str(result.passed).lower()}"
                        )
                case str(text):
                    if result.claim != text:
                        raise ModelFailure(f"decision {number} is not about claim {number}")
                    if result.grade is not None:
                        raise ModelFailure(f"claim {number} is not graded, but its decision has a grade")
        if verdict.holds != all(result.passed for result in verdict.claims):
            raise ModelFailure("the verdict's `holds` disagrees with its claims")
