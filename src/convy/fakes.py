"""Simple working stand-ins for every interface the engine plays through: the agent, the models, the
judge, the journal and the clock. They are public, so a user can test their own wiring with them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Self

from convy.play.agent import Answer, Message, Plain, Usage
from convy.play.dialog import Decided
from convy.play.model import Reply, Schema
from convy.play.outcome import ClaimResult, Outcome, Turn, Verdict
from convy.project.scenario import Claim


class NothingToOpen:
    """A fake conversation's opening and closing: there is no session to open or to end."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        return None


class FakeConversation(NothingToOpen):
    """A conversation with a FakeAgent: it answers the user's n-th message with the n-th answer."""

    def __init__(self, answers: Sequence[str], key: str) -> None:
        self._answers = answers
        self.key = key
        self.said: list[str] = []

    async def reply(self, text: str) -> Answer:
        self.said.append(text)
        answer = self._answers[(len(self.said) - 1) % len(self._answers)]
        return Answer(text=answer, usage=Usage(input=len(text) // 4, output=len(answer) // 4))


class FakeAgent(Plain):
    """An agent that answers from a list, in turn; `conversations` keeps every conversation had."""

    def __init__(self, answers: Sequence[str] = ("Hello! How can I help?",)) -> None:
        self._answers = answers
        self.conversations: list[FakeConversation] = []

    def conversation(self, key: str) -> FakeConversation:
        conversation = FakeConversation(self._answers, key)
        self.conversations.append(conversation)
        return conversation


class EchoConversation(NothingToOpen):
    """A conversation with Echo: it answers what it was told."""

    async def reply(self, text: str) -> Answer:
        return Answer(text=text)


class Echo(Plain):
    """An agent that says back what it was told."""

    def conversation(self, key: str) -> EchoConversation:
        return EchoConversation()


class FakeModel:
    """A model that replies from a list, in turn (then FINISHED), reporting tokens from lengths;
    `asked` keeps every list of messages it was sent."""

    def __init__(self, replies: Sequence[str] = ("FINISHED",), name: str = "fake") -> None:
        self._replies = replies
        self._name = name
        self.asked: list[tuple[Message, ...]] = []

    @property
    def name(self) -> str:
        return self._name

    async def reply(self, messages: tuple[Message, ...], json: bool | Schema = False) -> Reply:
        self.asked.append(messages)
        index = len(self.asked) - 1
        text = self._replies[index] if index < len(self._replies) else "FINISHED"
        return Reply(
            text=text,
            usage=Usage(input=sum(len(m.content) for m in messages) // 4, output=len(text) // 4),
        )


class FakeJudge:
    """A judge that decides each plain claim by `decide(claim text, dialogue text)` (default: it
    holds) and gives each graded claim its first passing grade."""

    def __init__(self, decide: Callable[[str, str], bool] = lambda claim, dialogue: True) -> None:
        self._decide = decide
        self.judged = 0

    async def decide(self, claims: tuple[Claim, ...], turns: tuple[Turn, ...]) -> Decided:
        self.judged += 1
        dialogue = "\n".join(f"User: {t.user}\nAgent: {t.agent}" for t in turns)
        results: list[ClaimResult] = []
        for claim in claims:
            match claim:
                case str():
                    passed = self._decide(claim, dialogue)
                    results.append(ClaimResult(claim=claim, passed=passed, reason="fake judge"))
                case _:
                    grade = next(name for name, passes in claim.grades.items() if passes)
                    results.append(
                        ClaimResult(claim=claim.claim, passed=True, grade=grade, reason="fake judge")
                    )
        verdict = Verdict(holds=all(r.passed for r in results), claims=tuple(results))
        return Decided(verdict=verdict, usage=Usage(input=len(dialogue) // 4, output=len(results) * 12))


class MemoryJournal:
    """A journal that keeps outcomes in memory, in the order they ended."""

    def __init__(self) -> None:
        self.outcomes: list[Outcome] = []

    def record(self, outcome: Outcome) -> None:
        self.outcomes.append(outcome)


class FakeClock:
    """A clock for Patience whose time moves only when something sleeps on it: a sleep of any
    length returns at once (after letting other tasks run) with the time moved on by it. `slept`
    keeps every wait asked for."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self.slept: list[float] = []

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self._now += seconds
        await asyncio.sleep(0)


class ManualClock:
    """A clock that moves only when slept on, for code that waits without an event loop (the
    action's retries): `now` starts at 0, `wall` at `epoch`; `slept` keeps every wait asked for."""

    def __init__(self, epoch: float = 1_800_000_000.0) -> None:
        self._now = 0.0
        self._epoch = epoch
        self.slept: list[float] = []

    def now(self) -> float:
        return self._now

    def wall(self) -> float:
        return self._epoch + self._now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self._now += seconds


__all__ = ["Echo", "FakeAgent", "FakeClock", "FakeJudge", "FakeModel", "ManualClock", "MemoryJournal"]
