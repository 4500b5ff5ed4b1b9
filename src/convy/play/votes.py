"""A judge that votes (decision 41): each claim decided by the majority of several judge calls,
all with the same request — the judge's and each panel member's, `judge-votes` times each, or once
each and twice more where a claim fails (`failing`) — every call after a judge's first at
`vote-temperature`."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterable

import msgspec

from convy.play.agent import Message, Usage
from convy.play.attempt import Spent
from convy.play.dialog import ChatJudge, Decided, Judge
from convy.play.model import Model, ModelFailure, Models
from convy.play.outcome import ClaimResult, Turn, Verdict, Vote
from convy.project.jury import ONE, Votes
from convy.project.scenario import Claim


class Juror(msgspec.Struct, frozen=True):
    """One judge that votes: its model as asked for its first vote, and as asked for its later ones
    (at `vote-temperature`; the same model when convy cannot set its temperature)."""

    first: Model
    later: Model


class Jury(msgspec.Struct, frozen=True):
    """The judges of a run and how they vote: the judge alone when it decides with one call, else a
    VotingJudge of the judge and its panel."""

    models: Models
    votes: Votes

    def judge(self, wrapped: Callable[[Model], Model]) -> Judge:
        """The judge, each of its models `wrapped` (with its limits)."""
        models = self.models
        if self.votes == ONE and not models.panel:
            return ChatJudge(wrapped(models.judge))
        firsts = (models.judge, *models.panel)
        laters = models.later or firsts
        return VotingJudge(
            tuple(Juror(wrapped(first), wrapped(later)) for first, later in zip(firsts, laters, strict=True)),
            self.votes,
        )


class VotingJudge(msgspec.Struct, frozen=True):
    """The judge and its panel (`jurors`, the judge first), voting as `votes` says: every call gets
    the request the first juror's ChatJudge makes, and each claim takes the majority of all votes
    (an odd number: the grade the most of that side gave, and the reason of the first vote that
    gave it), recording every vote with its judge's name. One call that fails fails the decision,
    as a ModelFailure counting the tokens of every call."""

    jurors: tuple[Juror, ...]
    votes: Votes

    async def decide(self, claims: tuple[Claim, ...], turns: tuple[Turn, ...]) -> Decided:
        asked = ChatJudge(self.jurors[0].first).messages(claims, turns)
        first = [(juror.first.name, juror.first) for juror in self.jurors]
        later = [
            (juror.first.name, juror.later) for _ in range(self.votes.count - 1) for juror in self.jurors
        ]
        cast = await self.cast(claims, asked, (*first, *later))
        if self.votes.failing and any(
            not result.passed for _, decided in cast for result in decided.verdict.claims
        ):
            more = [(juror.first.name, juror.later) for _ in range(2) for juror in self.jurors]
            cast += await self.cast(claims, asked, tuple(more))
        results = tuple(
            Majority(claim, tuple((name, d.verdict.claims[i]) for name, d in cast)).result()
            for i, claim in enumerate(claims)
        )
        usage = self.spent(decided.usage for _, decided in cast)
        return Decided(verdict=Verdict(holds=all(r.passed for r in results), claims=results), usage=usage)

    def spent(self, usages: Iterable[Usage | None]) -> Usage | None:
        """The tokens several calls reported, added up as an attempt adds them (Spent)."""
        total = Spent()
        for usage in usages:
            total.add(usage)
        return total.usage()

    async def cast(
        self, claims: tuple[Claim, ...], asked: tuple[Message, ...], calls: tuple[tuple[str, Model], ...]
    ) -> tuple[tuple[str, Decided], ...]:
        """Each call's decisions, by the name of the judge that made it; the first failure raised
        once every call has ended, with the tokens all of them spent."""
        answers = await asyncio.gather(
            *(ChatJudge(model).answer(claims, asked) for _, model in calls), return_exceptions=True
        )
        failures = [answer for answer in answers if isinstance(answer, BaseException)]
        if not failures:
            return tuple(
                (name, answer)
                for (name, _), answer in zip(calls, answers, strict=True)
                if isinstance(answer, Decided)
            )
        tokens = self.spent(
            answer.usage if isinstance(answer, (Decided, ModelFailure)) else None for answer in answers
        )
        failure = next((f for f in failures if isinstance(f, ModelFailure)), failures[0])
        if isinstance(failure, ModelFailure):
            name = next(name for (name, _), answer in zip(calls, answers, strict=True) if answer is failure)
            raise ModelFailure(
                f"{name}'s vote: {failure}",
                kind=failure.kind,
                status=failure.status,
                message=failure.message,
                raw=failure.raw,
                usage=tokens,
            ) from failure
        raise failure


class Majority(msgspec.Struct, frozen=True):
    """One claim's votes, by the name of the judge of each, and the decision they make."""

    claim: Claim
    votes: tuple[tuple[str, ClaimResult], ...]

    def result(self) -> ClaimResult:
        passes = sum(result.passed for _, result in self.votes)
        passed = passes * 2 > len(self.votes)
        side = [result for _, result in self.votes if result.passed == passed]
        grade = Counter(result.grade for result in side).most_common(1)[0][0]
        chosen = next(result for result in side if result.grade == grade)
        return msgspec.structs.replace(
            chosen,
            votes=tuple(Vote(judge=name, passed=r.passed, grade=r.grade) for name, r in self.votes),
        )
