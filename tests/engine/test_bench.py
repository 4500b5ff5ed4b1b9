"""The bench: concurrency, declaration order, failures contained per attempt."""

from __future__ import annotations

import asyncio
import random

import msgspec

from convy.fakes import FakeAgent, FakeJudge, FakeModel, MemoryJournal
from convy.play.agent import AgentFailure, Answer
from convy.play.attempt import Attempt
from convy.play.bench import Bench
from convy.play.outcome import Failed, NoVerdict, Verdict
from convy.project.scenario import Scenario


def scenario(name: str, opening: str = "hi") -> Scenario:
    return msgspec.convert({"name": name, "user": "u", "opening": opening, "claims": ["c"]}, Scenario)


class Jittery:
    """An agent whose conversations end in random order."""

    def __init__(self) -> None:
        self.open = 0
        self.peak = 0

    def conversation(self, key: str) -> Jittery:
        return self

    async def __aenter__(self) -> Jittery:
        self.open += 1
        self.peak = max(self.peak, self.open)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.open -= 1

    async def reply(self, text: str) -> Answer:
        await asyncio.sleep(random.random() / 100)
        return Answer(text="ok")


class Broken:
    """An agent whose conversations raise an unexpected error."""

    def conversation(self, key: str) -> Broken:
        return self

    async def __aenter__(self) -> Broken:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def reply(self, text: str) -> Answer:
        raise ZeroDivisionError("bug in the agent")


def test_results_come_back_in_declaration_order_not_completion_order() -> None:
    attempts = [Attempt(scenario=scenario(f"s{i}"), index=j, max_turns=1) for i in range(5) for j in range(3)]
    journal = MemoryJournal()
    bench = Bench(agent=Jittery(), user=FakeModel(), judge=FakeJudge(), ahead=8)
    outcomes = asyncio.run(bench.run(attempts, journal))
    assert [(o.scenario, o.index) for o in outcomes] == [(a.scenario.name, a.index) for a in attempts]
    assert len(journal.outcomes) == 15


def test_no_more_attempts_are_under_way_than_the_bench_allows() -> None:
    agent = Jittery()
    attempts = [Attempt(scenario=scenario("s"), index=j, max_turns=2) for j in range(20)]
    asyncio.run(
        Bench(agent=agent, user=FakeModel(["more"] * 40), judge=FakeJudge(), ahead=3).run(
            attempts, MemoryJournal()
        )
    )
    assert agent.peak == 3


def test_an_agent_failure_fails_the_attempt_without_asking_the_judge() -> None:
    class Failing(FakeAgent):
        def conversation(self, key: str):  # type: ignore[no-untyped-def]
            conversation = super().conversation(key)

            async def reply(text: str) -> Answer:
                raise AgentFailure("http_500", "POST http://agent/chat")

            conversation.reply = reply  # type: ignore[method-assign]
            return conversation

    judge = FakeJudge()
    outcomes = asyncio.run(
        Bench(agent=Failing(), user=FakeModel(), judge=judge).run(
            [Attempt(scenario=scenario("s"), index=0, max_turns=3)], MemoryJournal()
        )
    )
    assert outcomes[0].decision == Failed(reason="http_500", detail="POST http://agent/chat")
    assert judge.judged == 0


def test_a_bug_in_the_agent_fails_that_attempt_and_the_run_goes_on() -> None:
    attempts = [Attempt(scenario=scenario("s"), index=j, max_turns=2) for j in range(3)]
    outcomes = asyncio.run(
        Bench(agent=Broken(), user=FakeModel(), judge=FakeJudge()).run(attempts, MemoryJournal())
    )
    assert [o.decision.reason for o in outcomes if isinstance(o.decision, Failed)] == ["agent_error"] * 3


def test_an_empty_user_reply_is_no_verdict() -> None:
    outcomes = asyncio.run(
        Bench(agent=FakeAgent(), user=FakeModel(["  "]), judge=FakeJudge()).run(
            [Attempt(scenario=scenario("s", opening=""), index=0, max_turns=3)], MemoryJournal()
        )
    )
    assert isinstance(outcomes[0].decision, NoVerdict) and outcomes[0].decision.reason == "user_failure"


def test_the_dialogue_stops_at_max_turns_and_at_finished() -> None:
    many = asyncio.run(
        Bench(agent=FakeAgent(), user=FakeModel(["more"] * 10), judge=FakeJudge()).run(
            [Attempt(scenario=scenario("s"), index=0, max_turns=3)], MemoryJournal()
        )
    )
    short = asyncio.run(
        Bench(agent=FakeAgent(), user=FakeModel(["FINISHED"]), judge=FakeJudge()).run(
            [Attempt(scenario=scenario("s"), index=0, max_turns=3)], MemoryJournal()
        )
    )
    assert (len(many[0].turns), many[0].ended) == (3, "max_turns")
    assert (len(short[0].turns), short[0].ended) == (1, "user_finished")
    assert isinstance(short[0].decision, Verdict) and short[0].decision.holds
