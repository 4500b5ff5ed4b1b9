"""Reused verdicts and the replayed user, piece by piece: the lookup a run's attempts share (one
judge call per transcript, however the attempts interleave; the next one asks when the first got no
verdict), and a pairing with a baseline attempt (replayed up to where the baseline got, then the
user model; no pair, no replay)."""

from __future__ import annotations

import asyncio

from convy.fakes import FakeAgent, FakeJudge, FakeModel, MemoryJournal
from convy.play.attempt import Attempt
from convy.play.bench import Bench
from convy.play.dialog import Decided
from convy.play.model import ModelFailure
from convy.play.outcome import Cost, Failed, Outcome, Turn, Verdict
from convy.play.replay import Pairing, Pairs
from convy.play.reuse import Verdicts
from convy.project.scenario import Claim, Scenario

SCRIPTED = Scenario(name="greet", turns=("hello", "again"), claims=("The agent answers.",))
BRIEF = Scenario(name="ask", user="A customer.", claims=("The agent answers.",))


def attempts(scenario: Scenario, count: int) -> tuple[Attempt, ...]:
    return tuple(Attempt(scenario=scenario, index=i, max_turns=8, run="now") for i in range(count))


def test_attempts_with_one_transcript_are_judged_once_whatever_the_order() -> None:
    judge = FakeJudge()
    bench = Bench(
        agent=FakeAgent(["hi", "yes"]), user=FakeModel(), judge=judge, ahead=8, verdicts=Verdicts("now")
    )
    outcomes = asyncio.run(bench.run(attempts(SCRIPTED, 6), MemoryJournal()))
    assert judge.judged == 1
    judged = [o for o in outcomes if o.reused is None]
    assert len(judged) == 1
    assert all(
        o.reused is not None and o.reused.index == judged[0].index for o in outcomes if o is not judged[0]
    )
    assert {o.decision for o in outcomes} == {judged[0].decision}
    assert all(o.judge_usage is not None and o.judge_usage.input == 0 for o in outcomes if o.reused)


class FailsOnce:
    """A judge whose first call fails: the attempt gets no verdict, the next one asks again."""

    def __init__(self) -> None:
        self.calls = 0
        self.judge = FakeJudge()

    async def decide(self, claims: tuple[Claim, ...], turns: tuple[Turn, ...]) -> Decided:
        self.calls += 1
        if self.calls == 1:
            raise ModelFailure("the judge is down")
        return await self.judge.decide(claims, turns)


def test_a_transcript_whose_judging_failed_is_judged_by_the_next_attempt() -> None:
    judge = FailsOnce()
    bench = Bench(agent=FakeAgent(["hi", "yes"]), user=FakeModel(), judge=judge, ahead=8)
    outcomes = asyncio.run(bench.run(attempts(SCRIPTED, 4), MemoryJournal()))
    assert judge.calls == 2
    assert sum(isinstance(o.decision, Verdict) for o in outcomes) == 3
    assert sum(o.reused is not None for o in outcomes) == 2


def baseline(turns: tuple[Turn, ...], ended: str, decision: Verdict | Failed) -> Outcome:
    return Outcome(
        scenario="ask",
        index=0,
        fingerprint=BRIEF.fingerprint(),
        turns=turns,
        seconds=1.0,
        decision=decision,
        ended=ended,
        cost=Cost(user=0.003, judge=0.002),
    )


def test_a_failed_baseline_attempt_is_replayed_up_to_where_it_got_then_the_user_model_speaks() -> None:
    before = baseline(
        (Turn(user="first", agent="hi", seconds=0.1),), "agent_failed", Failed(reason="http_500")
    )
    user = FakeModel(["from the model", "FINISHED"])
    pairs = Pairs({("ask", 0): Pairing.of(before)})
    bench = Bench(agent=FakeAgent(["hi", "ok"]), user=user, judge=FakeJudge(), pairs=pairs)
    (outcome,) = asyncio.run(bench.run(attempts(BRIEF, 1), MemoryJournal()))
    assert [(t.user, t.replayed) for t in outcome.turns] == [("first", True), ("from the model", False)]
    assert len(user.asked) == 2, "the second message and FINISHED, from the model"
    assert [m.content for m in user.asked[0]][-2:] == ["first", "hi"], "it reads the replayed turn"
    assert outcome.reused is None and outcome.saved is not None
    assert outcome.saved.user == 0.003 and outcome.saved.judge == 0.0


def test_an_unchanged_answer_replays_the_user_to_its_end_and_an_attempt_without_pair_asks_the_model() -> None:
    said = (Turn(user="first", agent="hi", seconds=0.1), Turn(user="second", agent="ok", seconds=0.1))
    before = baseline(said, "user_finished", Verdict(holds=True, claims=()))
    user = FakeModel(["one", "two", "FINISHED"])
    pairs = Pairs({("ask", 0): Pairing.of(before)})
    bench = Bench(agent=FakeAgent(["hi", "ok"]), user=user, judge=FakeJudge(), pairs=pairs)
    replayed, unpaired = asyncio.run(bench.run(attempts(BRIEF, 2), MemoryJournal()))
    assert all(t.replayed for t in replayed.turns) and replayed.ended == "user_finished"
    assert replayed.saved is not None and replayed.saved.user == 0.003
    assert replayed.user_usage is not None and replayed.user_usage.input == 0
    assert [t.user for t in unpaired.turns] == ["one", "two"] and not any(t.replayed for t in unpaired.turns)
    assert len(user.asked) == 3, "only the attempt without a pair asked the user model"


def test_the_token_medians_count_only_the_attempts_that_asked_the_model() -> None:
    from convy.compare.summary import Summed
    from convy.play.agent import Usage
    from convy.play.outcome import Reused
    from convy.store.runfile import RunFile, RunSpec, ScenarioEntry

    def line(index: int, reused: bool, replayed: bool) -> Outcome:
        return Outcome(
            scenario="greet",
            index=index,
            fingerprint="f",
            turns=(Turn(user="hello", agent="hi", seconds=0.1, replayed=replayed),),
            seconds=0.2,
            decision=Verdict(holds=True, claims=()),
            user_usage=Usage(input=0, output=0) if replayed else Usage(input=300, output=20),
            judge_usage=Usage(input=0, output=0) if reused else Usage(input=500, output=40),
            reused=Reused(run="before", scenario="greet", index=index) if reused else None,
        )

    spec = RunSpec(
        agent="bot",
        repeat=4,
        scenarios=(ScenarioEntry(name="greet", fingerprint="f", file="g.yaml", line=1),),
    )
    file = RunFile(format=1, spec=spec, status="finished", started="2026-12-02T10:00:00Z")
    outcomes = [line(0, False, False), line(1, True, True), line(2, True, True), line(3, True, False)]
    summary = Summed(file, "results/bot/run", outcomes).summary()
    assert summary.judge_tokens.count == 1 and summary.judge_tokens.median == 540
    assert summary.user_tokens.count == 2 and summary.user_tokens.median == 320
