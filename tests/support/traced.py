"""One attempt of a scripted scenario against a JSON agent."""

from __future__ import annotations

import asyncio

import msgspec

from convy.fakes import FakeJudge, FakeModel
from convy.play.attempt import Attempt
from convy.play.outcome import Outcome
from convy.play.wire.agent import JsonAgent
from convy.project.scenario import Scenario


def scripted(*turns: str, name: str = "s") -> Scenario:
    return msgspec.convert({"name": name, "turns": list(turns), "claims": ["c"]}, Scenario)


def played(agent: JsonAgent, *turns: str, ready: bool = False) -> Outcome:
    """One attempt of a scripted scenario against `agent` (its ready() first when asked)."""

    async def run() -> Outcome:
        if ready:
            await agent.ready()
        return await Attempt(scenario=scripted(*turns), index=0, max_turns=10).outcome(
            agent, FakeModel(), FakeJudge()
        )

    return asyncio.run(run())
