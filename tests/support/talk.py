"""A conversation with a JSON agent, each answer with the seconds its turn took."""

from __future__ import annotations

import asyncio
import time

from convy.play.agent import Answer
from convy.play.wire.agent import JsonAgent
from convy.play.wire.spec import AgentSpec

TIMEOUT = 30.0


def timed(agent: AgentSpec, texts: list[str]) -> list[tuple[Answer, float]]:
    """Each turn's answer and the seconds the turn took, from sending to its answer read."""

    async def run() -> list[tuple[Answer, float]]:
        answers = []
        async with JsonAgent(agent, TIMEOUT).conversation("c1") as conversation:
            for text in texts:
                began = time.monotonic()
                answer = await conversation.reply(text)
                answers.append((answer, time.monotonic() - began))
        return answers

    return asyncio.run(run())


def talk(agent: AgentSpec, texts: list[str]) -> list[Answer]:
    return [answer for answer, _ in timed(agent, texts)]
