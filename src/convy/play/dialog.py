"""The two parts of a dialogue that models play: the simulated user, with its moves (saying
something, or finishing by the FINISHED rule), and the judge — its interface, what it gives back (a
verdict with its token usage), and a judge that asks a model for a reply shaped by a schema, asked
again once.

Every error or wrong answer of a judge becomes a ModelFailure, and a judge is given only what was
said. What the judge reads and how its answer is read is in rulings.py."""

from __future__ import annotations

import re
from typing import Protocol

import msgspec

from convy.data import Data
from convy.play import prompts
from convy.play.agent import Message, Usage
from convy.play.model import Model, ModelFailure, Schema
from convy.play.outcome import Turn, Verdict
from convy.play.rulings import Allowed, ClaimList, Transcript, Unwrapped
from convy.project.scenario import Claim, Graded, Scenario
from convy.words import Plural


class Said(Data, frozen=True, kw_only=True):
    """The simulated user's next message, and the tokens its model reported for it (None for the
    scenario's opening, which no model wrote, or when the model did not say)."""

    text: str
    usage: Usage | None = None
    replayed: bool = False
    """The message is the baseline attempt's at this turn (`replay: user`), not a model's."""


class Finished(Data, frozen=True, kw_only=True):
    """The simulated user ended the dialogue (satisfied, or gave up), with the tokens its model
    reported for saying so."""

    usage: Usage | None = None


class LastLine(msgspec.Struct, frozen=True):
    """A simulated user's reply read for the FINISHED rule: it ends the dialogue when its last line,
    stripped of punctuation and case, is FINISHED (what comes before that line is not sent)."""

    text: str

    def finished(self) -> bool:
        lines = self.text.strip().splitlines()
        if not lines:
            return False
        word = re.sub(r"[^\w\s]|_", "", lines[-1]).strip()
        return word.casefold() == prompts.FINISHED.casefold()


class UserBrief(Protocol):
    """The simulated user's system text: who it plays and what it is after."""

    def system(self, turns: int) -> str:
        """The text for the message after `turns` agent answers."""
        ...


class Persona(msgspec.Struct, frozen=True):
    """A cooperative person, as the scenario's `user` describes them: the same text every turn."""

    scenario: Scenario

    def system(self, turns: int) -> str:
        return prompts.USER_SYSTEM.substitute(brief=self.scenario.user, finished=prompts.FINISHED)


class Attacker(msgspec.Struct, frozen=True):
    """An adversarial user (a scenario with `attack`): told the goal, the strategy and how far the
    conversation is — of `most` messages, a crescendo moves from rapport to probing to pressure to
    the direct demand by the share of the turns used, its last message the demand; a direct attack
    demands from the first; a role-play one moves as a crescendo does, inside its role."""

    scenario: Scenario
    most: int

    def phase(self, turns: int) -> str:
        """What the message after `turns` answers does: the phase for the share of turns used."""
        if self.scenario.attack.strategy == "direct":
            return prompts.PHASES[-1]
        most, last = max(self.most, turns + 1, 1), len(prompts.PHASES) - 1
        return prompts.PHASES[last if turns >= most - 1 else min(last, turns * len(prompts.PHASES) // most)]

    def system(self, turns: int) -> str:
        attack = self.scenario.attack
        brief = self.scenario.user.strip()
        persona = prompts.PERSONA.substitute(brief=brief) if brief else ""
        return prompts.ATTACKER_SYSTEM.substitute(
            goal=attack.goal.strip(),
            strategy=f"{attack.strategy}. {prompts.STRATEGY[attack.strategy]}",
            persona=persona,
            turn=turns + 1,
            most=max(self.most, turns + 1),
            phase=self.phase(turns),
            finished=prompts.FINISHED,
        )


class SimulatedUser(msgspec.Struct, frozen=True):
    """The scenario's user, played by a model. Its request (§13.1): the system text (the rules and
    the brief: a Persona, or an Attacker for a scenario with `attack`, told it may have
    `max_turns` messages), a user message that starts the conversation (USER_START), then the
    dialogue with the agent's messages as `user` and its own (the opening included) as
    `assistant`; every request ends with a user message, so it renders under any chat template
    that alternates user and assistant after an optional system message."""

    model: Model
    scenario: Scenario
    max_turns: int = 0

    def brief(self) -> UserBrief:
        """Who the model plays: the scenario's attacker, else its person."""
        if self.scenario.attack:
            return Attacker(self.scenario, self.max_turns or self.scenario.max_turns)
        return Persona(self.scenario)

    def messages(self, turns: tuple[Turn, ...]) -> tuple[Message, ...]:
        """The request for the user's next message: the system text, the start, then the dialogue."""
        system = Message(role="system", content=self.brief().system(len(turns)))
        dialogue = tuple(
            message
            for turn in turns
            for message in (
                Message(role="assistant", content=turn.user),
                Message(role="user", content=turn.agent),
            )
        )
        return (system, Message(role="user", content=prompts.USER_START), *dialogue)

    async def next(self, turns: tuple[Turn, ...]) -> Said | Finished:
        """The user's move after `turns`: its next message (trimmed), or Finished when the reply's
        last line is FINISHED (LastLine). The scenario's scripted turns (or its opening) are said
        first without asking the model; after them, a scenario without a brief is Finished. An empty
        reply is a ModelFailure (with the tokens it spent); the model's own errors come out as they
        are."""
        script = self.scenario.script
        if len(turns) < len(script):
            return Said(text=script[len(turns)])
        if not self.scenario.simulated:
            return Finished()
        reply = await self.model.reply(self.messages(turns))
        text = reply.text.strip()
        if not text:
            raise ModelFailure("the simulated user's reply is empty", usage=reply.usage)
        if LastLine(text).finished():
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


class VerdictSchema(msgspec.Struct, frozen=True):
    """The Schema of a judge's answer for these claims, in OpenAI's strict subset (every property
    required, no extra ones): exactly as many decisions as claims, each a plain decision (`reason`,
    `pass`) or a graded claim's (`reason`, `grade` — one of that claim's grades, an enum — and
    `pass`)."""

    claims: tuple[Claim, ...]

    def schema(self) -> Schema:
        count = len(self.claims)
        reason = {"type": "string"}
        shapes: list[dict[str, object]] = []
        if any(isinstance(claim, str) for claim in self.claims):
            shapes.append(Shape(("reason", "pass"), {"reason": reason, "pass": {"type": "boolean"}}).schema())
        for grades in dict.fromkeys(
            tuple(claim.grades) for claim in self.claims if isinstance(claim, Graded)
        ):
            properties = {
                "reason": reason,
                "grade": {"type": "string", "enum": list(grades)},
                "pass": {"type": "boolean"},
            }
            shapes.append(Shape(("reason", "grade", "pass"), properties).schema())
        items = shapes[0] if len(shapes) == 1 else {"anyOf": shapes}
        decisions = {"type": "array", "items": items, "minItems": count, "maxItems": count}
        return Schema(
            name="verdict",
            schema={
                "type": "object",
                "properties": {"decisions": decisions},
                "required": ["decisions"],
                "additionalProperties": False,
            },
        )


class Shape(msgspec.Struct, frozen=True):
    """One kind of decision in the schema: an object of exactly these properties, all required."""

    required: tuple[str, ...]
    properties: dict[str, object]

    def schema(self) -> dict[str, object]:
        return {
            "type": "object",
            "properties": self.properties,
            "required": list(self.required),
            "additionalProperties": False,
        }


class ChatJudge(msgspec.Struct, frozen=True):
    """A judge that asks a model, once per attempt, for one decision per claim, with the Schema of
    that answer (VerdictSchema: the model's server goes down the structured-output chain as far as
    it must). The reply is Unwrapped and read; one that cannot be read, or that the scenario does
    not allow (Allowed), is asked about again once, with the reason, before it is a ModelFailure
    (`unreadable`) keeping the raw reply. The tokens of both requests are counted."""

    model: Model

    def messages(self, claims: tuple[Claim, ...], turns: tuple[Turn, ...]) -> tuple[Message, ...]:
        """The judge's request: the fixed system text, then the claims and the transcript between
        its boundary lines."""
        return (
            Message(role="system", content=prompts.JUDGE_SYSTEM.substitute()),
            Message(
                role="user",
                content=prompts.JUDGE_REQUEST.substitute(
                    count=len(claims),
                    claims=ClaimList(claims).text(),
                    transcript=Transcript(turns).text(),
                    boundary=Transcript(turns).boundary(),
                ),
            ),
        )

    def again(
        self, claims: tuple[Claim, ...], asked: tuple[Message, ...], reply: str, reason: str
    ) -> tuple[Message, ...]:
        """The request asked again: the first one, the reply as the judge's, then why it was not read."""
        return (
            *asked,
            Message(role="assistant", content=reply),
            Message(role="user", content=prompts.JUDGE_AGAIN.substitute(reason=reason, count=len(claims))),
        )

    async def decide(self, claims: tuple[Claim, ...], turns: tuple[Turn, ...]) -> Decided:
        return await self.answer(claims, self.messages(claims, turns))

    async def answer(self, claims: tuple[Claim, ...], asked: tuple[Message, ...]) -> Decided:
        """The model's decisions on `claims` asked with `asked` (the request `messages` made)."""
        schema = VerdictSchema(claims).schema()
        reply = await self.model.reply(asked, schema)
        try:
            return Decided(verdict=self.read(claims, reply.text), usage=reply.usage)
        except ModelFailure as unread:
            reason = str(unread)
        try:
            second = await self.model.reply(self.again(claims, asked, reply.text, reason), schema)
        except ModelFailure as error:
            error.usage = (reply.usage or Usage()).plus(error.usage) if reply.usage or error.usage else None
            raise
        spent = (reply.usage or Usage()).plus(second.usage) if reply.usage or second.usage else None
        try:
            return Decided(verdict=self.read(claims, second.text), usage=spent)
        except ModelFailure as unread:
            raise ModelFailure(
                f"the judge's reply could not be read, asked twice: {unread}",
                kind="unreadable",
                raw=second.text,
                usage=spent,
            ) from None

    def read(self, claims: tuple[Claim, ...], text: str) -> Verdict:
        """The verdict a reply gives; ModelFailure (`unreadable`) saying what is wrong with it."""
        answer = Unwrapped(text).rulings()
        if len(answer.decisions) != len(claims):
            raise ModelFailure(
                f"it gave {Plural(len(answer.decisions), 'decision').text()} for "
                f"{Plural(len(claims), 'claim').text()}",
                kind="unreadable",
            )
        results = tuple(
            decision.result(number, claim)
            for number, (decision, claim) in enumerate(zip(answer.decisions, claims, strict=True), start=1)
        )
        verdict = Verdict(holds=all(result.passed for result in results), claims=results)
        Allowed(claims).check(verdict)
        return verdict


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
            raise ModelFailure(f"the judge's answer cannot be stored: {error}", kind="unreadable") from None
        self.check(claims, decided.verdict)
        return decided

    def check(self, claims: tuple[Claim, ...], verdict: Verdict) -> None:
        Allowed(claims).check(verdict)
