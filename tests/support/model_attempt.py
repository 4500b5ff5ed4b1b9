"""One attempt played with the simulated user and the judge at model stand-ins."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import TypeVar

import httpx

from convy.fakes import FakeAgent, FakeClock
from convy.play.attempt import Attempt
from convy.play.busy import Patience, Places
from convy.play.dialog import ChatJudge, Checked
from convy.play.model import Contained, Model, OpenAiModel, PatientModel
from convy.play.outcome import NoVerdict, Verdict
from convy.play.rate import Pace
from convy.project.scenario import Scenario
from tests.servers.models import (
    Canned,
    ModelServer,
    Request,
)

T = TypeVar("T")
KEY = "sk-test-SECRET-123"
PLAIN = "The agent asks for the order number."


def using(use: Callable[[httpx.AsyncClient], Awaitable[T]], timeout: float = 5.0) -> T:
    async def run() -> T:
        async with httpx.AsyncClient(timeout=timeout) as client:
            return await use(client)

    return asyncio.run(run())


def model(client: httpx.AsyncClient, url: str, **fields: object) -> OpenAiModel:
    return OpenAiModel(url=url, key=KEY, name="m", client=client, **fields)  # type: ignore[arg-type]


def patient(inner: Model, clock: FakeClock, patience: float = 300.0) -> PatientModel:
    return PatientModel(Contained(inner), Places(2, Pace(0), Patience(patience, clock=clock)))


def played(
    user_answer: Callable[[Request], str | Canned], judge_answer: Callable[[Request], str | Canned]
) -> NoVerdict | Verdict:
    with ModelServer(user_answer) as users, ModelServer(judge_answer) as judges:

        async def use(client: httpx.AsyncClient) -> NoVerdict | Verdict:
            clock = FakeClock()
            user = patient(model(client, users.url, max_tokens=400), clock, patience=5)
            judge = patient(model(client, judges.url, max_tokens=1500), clock, patience=5)
            scenario = Scenario(name="s", user="You are Dana.", opening="", claims=(PLAIN,))
            outcome = await Attempt(scenario=scenario, index=0, max_turns=2).outcome(
                FakeAgent(), user, Checked(ChatJudge(judge))
            )
            assert isinstance(outcome.decision, NoVerdict | Verdict)
            return outcome.decision

        return using(use, timeout=1.0)  # the answers that are not slow may take up to a second


JUDGED = json.dumps({"decisions": [{"pass": True, "reason": "Yes."}]})
