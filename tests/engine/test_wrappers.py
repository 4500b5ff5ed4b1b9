"""The agent's wrappers: TimeLimited (opening, each turn, closing) and QueuedAgent (a place per
open conversation, turns retried only while the agent is busy)."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Self

import pytest

from convy.play.agent import AgentFailure, Answer, QueuedAgent, TimeLimited
from convy.play.busy import Busy, GaveUp, Patience, Places
from convy.play.rate import Pace
from tests.clock import VirtualTime


class Slow:
    """An agent whose conversations take `opening`, `turn` and `closing` seconds, refuse their
    first `busy` turns (Busy) and count how many are open at once."""

    def __init__(
        self,
        opening: float = 0.0,
        turn: float = 0.0,
        closing: float = 0.0,
        busy: int = 0,
        refuse_open: int = 0,
        broken: bool = False,
    ) -> None:
        self.opening = opening
        self.turn = turn
        self.closing = closing
        self.busy = busy
        self.refuse_open = refuse_open
        self.broken = broken
        self.open = 0
        self.most = 0
        self.opened = 0
        self.closed = 0
        self.tries = 0
        self.heard: list[str] = []

    def conversation(self, key: str) -> SlowConversation:
        return SlowConversation(self)


class SlowConversation:
    def __init__(self, agent: Slow) -> None:
        self.agent = agent

    async def __aenter__(self) -> Self:
        agent = self.agent
        agent.opened += 1
        if agent.opened <= agent.refuse_open:
            raise Busy(0.01, "not now")
        if agent.broken:
            raise AgentFailure("http_500")
        await asyncio.sleep(agent.opening)
        agent.open += 1
        agent.most = max(agent.most, agent.open)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.agent.open -= 1
        await asyncio.sleep(self.agent.closing)
        self.agent.closed += 1

    async def reply(self, text: str) -> Answer:
        agent = self.agent
        agent.tries += 1
        if agent.tries <= agent.busy:
            raise Busy(0.01, f"refused try {agent.tries}")
        await asyncio.sleep(agent.turn)
        agent.heard.append(text)
        return Answer(text=f"you said {text}")


def talk(agent: TimeLimited | QueuedAgent, said: tuple[str, ...] = ("hello",)) -> list[str]:
    async def run() -> list[str]:
        async with agent.conversation("key") as conversation:
            return [(await conversation.reply(text)).text for text in said]

    return VirtualTime().run(run())


def test_time_limited_passes_answers_through() -> None:
    assert talk(TimeLimited(Slow(turn=0.01), 1.0), ("a", "b")) == ["you said a", "you said b"]


@pytest.mark.parametrize(
    ("slow", "expected"),
    [
        (Slow(turn=1.0), "no answer within 0.1 s"),
        (Slow(opening=1.0), "opening the conversation took over 0.1 s"),
        (Slow(closing=1.0), "closing the conversation took over 0.1 s"),
    ],
)
def test_time_limited_turns_a_timeout_into_an_agent_failure(slow: Slow, expected: str) -> None:
    with pytest.raises(AgentFailure) as caught:
        talk(TimeLimited(slow, 0.1))
    assert caught.value.reason == "timeout"
    assert caught.value.detail == expected


def test_time_limited_needs_a_positive_limit() -> None:
    with pytest.raises(ValueError):
        TimeLimited(Slow(), 0)


def places(at_once: int, patience: float = 2.0) -> Places:
    return Places(at_once, Pace(0), Patience(patience, first=0.01, most=0.05))


def test_queued_agent_holds_at_most_its_places_of_conversations() -> None:
    async def run() -> tuple[int, int, int]:
        slow = Slow(turn=0.02)
        agent = QueuedAgent(slow, places(2))

        async def conversation(index: int) -> None:
            async with agent.conversation(f"c{index}") as open_one:
                for turn in range(3):
                    await open_one.reply(f"{index}.{turn}")

        await asyncio.gather(*(conversation(index) for index in range(6)))
        return slow.most, len(slow.heard), slow.closed

    most, heard, closed = VirtualTime().run(run())
    assert most == 2
    assert heard == 18
    assert closed == 6


def test_queued_agent_sends_a_refused_turn_again() -> None:
    slow = Slow(busy=2)
    assert talk(QueuedAgent(slow, places(1))) == ["you said hello"]
    assert slow.tries == 3
    assert slow.heard == ["hello"]


def test_queued_agent_opens_again_when_refused() -> None:
    slow = Slow(refuse_open=1)
    assert talk(QueuedAgent(slow, places(1))) == ["you said hello"]
    assert slow.opened == 2


def test_queued_agent_gives_up_after_its_patience() -> None:
    slow = Slow(busy=1000)
    limited = places(1, patience=0.1)
    with pytest.raises(GaveUp) as caught:
        talk(QueuedAgent(slow, limited))
    assert caught.value.busy.detail.startswith("refused try")
    assert slow.heard == []
    assert limited.taken == 0
    assert slow.closed == 1


def test_queued_agent_lets_the_place_go_when_opening_fails() -> None:
    limited = places(1)
    with pytest.raises(AgentFailure, match="http_500"):
        talk(QueuedAgent(Slow(broken=True), limited))
    assert limited.taken == 0


def test_queued_agent_with_time_limits() -> None:
    slow = Slow(turn=1.0)
    limited = places(1)
    with pytest.raises(AgentFailure, match="timeout"):
        talk(QueuedAgent(TimeLimited(slow, 0.05), limited))
    assert limited.taken == 0
