"""The A2A dialect against the A2A servers that agent frameworks ship, each started here with a
deterministic model of our own (tests/servers/models.py) that answers with every user message it
was given, so that an answer shows what the agent remembered:

* pydantic-ai served by fasta2a (tests/servers/fasta2a_agent.py): A2A 1.0, a task answered at once
  `submitted` and asked after with `GetTask`, or streamed;
* agno's AgentOS with its A2A interface (tests/servers/agno_server.py, in agno's own virtual
  environment, started once per session): A2A 0.3 only, its card under the agent's path, its
  answer in the task's history, a 1.0 method refused with HTTP 400.

Each plays a three-turn conversation as an agent file written from the docs (Agents) would, and checks
the memory, the build the card names, and what went over the wire."""

from __future__ import annotations

import asyncio

import httpx
import msgspec
import pytest

from convy.play.agent import Answer
from convy.play.wire.agent import JsonAgent
from convy.play.wire.spec import AgentSpec
from tests.servers import fasta2a_agent
from tests.servers.agno_server import AgnoOs, remembering
from tests.servers.fasta2a_agent import PydanticShop
from tests.servers.models import ModelServer

TURNS = ["Hi, I am Ada", "My order is 42", "What do you know?"]
REMEMBERED = [
    "I remember: Hi, I am Ada",
    "I remember: Hi, I am Ada | My order is 42",
    "I remember: Hi, I am Ada | My order is 42 | What do you know?",
]


def played(agent: AgentSpec, conversations: int = 1) -> tuple[str, list[list[Answer]]]:
    """The build ready() named and each conversation's answers to TURNS."""

    async def run() -> tuple[str, list[list[Answer]]]:
        json_agent = JsonAgent(agent, 30.0)
        build = await json_agent.ready()
        talks = []
        for n in range(conversations):
            async with json_agent.conversation(f"c{n}") as conversation:
                talks.append([await conversation.reply(text) for text in TURNS])
        return build, talks

    return asyncio.run(run())


def spec(**fields: object) -> AgentSpec:
    return msgspec.convert({"protocol": "a2a", **fields}, AgentSpec)


# pydantic-ai (fasta2a)


@pytest.mark.parametrize("stream", ["none", "sse"])
def test_pydantic_ai_over_fasta2a_remembers_three_turns_and_names_its_build(stream: str) -> None:
    with ModelServer(remembering) as model, PydanticShop(model.url) as shop:
        build, talks = played(spec(url=shop.url, stream=stream), conversations=2)
    assert build == f"{fasta2a_agent.NAME} {fasta2a_agent.VERSION}"
    assert [[answer.text for answer in answers] for answers in talks] == [REMEMBERED, REMEMBERED]
    assert len(model.processed) == 6


# agno's AgentOS (A2A)


def test_agnos_a2a_remembers_three_turns_from_its_card_under_the_agents_path(agno_os: AgnoOs) -> None:
    before = len(agno_os.model.processed)
    build, [answers] = played(spec(url=agno_os.endpoint()))
    assert build == "Shoe Shop 1.0.0"
    assert [answer.text for answer in answers] == REMEMBERED
    assert len(agno_os.model.processed) - before == 3


def test_agnos_http_400_to_1_0_teaches_0_3_once_when_no_card_was_read(agno_os: AgnoOs) -> None:
    agent = JsonAgent(spec(url=agno_os.endpoint()), 30.0)

    async def run() -> list[Answer]:  # no ready(): the card is never read, so 1.0 is tried first
        async with agent.conversation("c0") as conversation:
            return [await conversation.reply(text) for text in TURNS]

    assert [answer.text for answer in asyncio.run(run())] == REMEMBERED
    assert agent.dialect.headers() == {}  # it speaks 0.3 now
    refused = httpx.post(
        agno_os.endpoint(),
        json={"jsonrpc": "2.0", "id": "1", "method": "SendMessage", "params": {}},
        timeout=30,
    )
    assert refused.status_code == 400
    assert "SendMessage" in refused.json()["detail"]


def test_agnos_a2a_with_version_0_3_and_its_card_named_remembers_three_turns(agno_os: AgnoOs) -> None:
    card = f"{agno_os.url}/a2a/agents/shop/.well-known/agent-card.json"
    build, [answers] = played(spec(url=agno_os.endpoint(), version=0.3, card=card))
    assert build == "Shoe Shop 1.0.0"
    assert [answer.text for answer in answers] == REMEMBERED


def test_agnos_a2a_streamed_remembers_three_turns(agno_os: AgnoOs) -> None:
    url = agno_os.endpoint().replace("message:send", "message:stream")
    build, [answers] = played(spec(url=url, stream="sse"))
    assert build == "Shoe Shop 1.0.0"
    assert [answer.text for answer in answers] == REMEMBERED
