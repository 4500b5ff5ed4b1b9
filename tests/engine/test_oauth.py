"""OAuth2 client credentials (docs/agents.md, RFC 6749 §4.4) against a real ASGI token endpoint and
agent (tests/servers/threads.py): one token fetched before any conversation and shared by all, sent
with every request (a session's start and end too), renewed before it runs out and once after the
agent refuses it (the turn then sent again), a refusal of the endpoint an exit 2 before any agent
request with its own words — and the client secret and the tokens never shown."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import msgspec
import pytest

from convy.errors import ConfigurationError
from convy.fakes import FakeClock
from convy.play.agent import AgentFailure, Answer
from convy.play.wire.agent import JsonAgent
from convy.play.wire.spec import AgentSpec
from tests.servers.agents import TlsFront
from tests.servers.threads import ThreadServer
from tests.support.certificates import Certificates
from tests.support.command import convy, lines, only_run
from tests.support.oauth_agents import SECRET, chat, oauth, threads


async def converse(agent: JsonAgent, key: str, texts: list[str]) -> list[Answer]:
    async with agent.conversation(key) as conversation:
        return [await conversation.reply(text) for text in texts]


def talk(agent: JsonAgent, texts: list[str]) -> list[Answer]:
    async def run() -> list[Answer]:
        await agent.ready()
        return await converse(agent, "c1", texts)

    return asyncio.run(run())


# One token for the run


def test_one_token_is_fetched_before_any_conversation_and_sent_with_every_request() -> None:
    async def run(agent: JsonAgent) -> list[list[Answer]]:
        await agent.ready()
        async with agent.kept(), asyncio.TaskGroup() as group:
            tasks = [group.create_task(converse(agent, f"c{n}", ["Hi", "Bye"])) for n in range(3)]
        return [task.result() for task in tasks]

    with ThreadServer(auth=True) as server:
        answers = asyncio.run(run(JsonAgent(threads(server), 5.0)))
        requests = server.seen()
        (token,) = server.issued
    assert [[answer.text for answer in each] for each in answers] == [
        ["echo: Hi (turn 1)", "echo: Bye (turn 2)"]
    ] * 3
    assert requests[0].path == "/oauth/token", "the token comes before any agent request"
    assert requests[0].headers["content-type"] == "application/x-www-form-urlencoded"
    assert server.grants == [
        {
            "grant_type": "client_credentials",
            "client_id": "convy-ci",
            "client_secret": SECRET,
            "scope": "agent.chat",
            "audience": "https://agents.example",
        }
    ]
    agent_requests = requests[1:]
    assert len(agent_requests) == 3 * 4, "a start, two turns and an end for each conversation"
    assert all(seen.headers["authorization"] == f"Bearer {token}" for seen in agent_requests)
    assert all(seen.status in (200, 204) for seen in agent_requests)


def test_scope_and_audience_are_left_out_when_not_given() -> None:
    with ThreadServer(auth=True) as server:
        (answer,) = talk(JsonAgent(chat(server), 5.0), ["Hi"])
    assert answer.text == "echo: Hi (turn 1)"
    assert server.grants == [
        {"grant_type": "client_credentials", "client_id": "convy-ci", "client_secret": SECRET}
    ]


# The token endpoint refuses: exit 2 before any agent request, in its own words


def test_a_wrong_secret_is_a_configuration_error_quoting_the_endpoint_before_any_agent_request() -> None:
    with ThreadServer(auth=True, client_secret="another-secret-entirely") as server:
        with pytest.raises(ConfigurationError) as caught:
            talk(JsonAgent(chat(server), 5.0), ["Hi"])
        agent_requests = server.agent_requests()
    assert caught.value.where == "auth.oauth2"
    assert f"{server.url}/oauth/token" in caught.value.message
    assert "HTTP 401: invalid_client: Client authentication failed: the secret *** is not the one" in str(
        caught.value
    )
    assert SECRET not in str(caught.value)
    assert agent_requests == []


def test_a_token_endpoint_that_cannot_be_reached_is_a_configuration_error() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with ThreadServer(auth=True) as server:
        agent = chat(server, auth={"oauth2": oauth(f"http://127.0.0.1:{port}/token")})
        with pytest.raises(ConfigurationError) as caught:
            talk(JsonAgent(agent, 5.0), ["Hi"])
        agent_requests = server.agent_requests()
    assert "no answer (ConnectError)" in caught.value.message
    assert agent_requests == []


def test_an_answer_without_an_access_token_is_a_configuration_error() -> None:
    with ThreadServer() as server:
        agent = chat(server, auth={"oauth2": oauth(f"{server.url}/sessions")})
        with pytest.raises(ConfigurationError) as caught:
            talk(JsonAgent(agent, 5.0), ["Hi"])
    assert "holds no access_token" in caught.value.message


# Renewed once after the agent refuses it


def test_a_revoked_token_is_renewed_once_and_the_turn_sent_again() -> None:
    async def run(agent: JsonAgent, server: ThreadServer) -> list[Answer]:
        await agent.ready()
        async with agent.conversation("c1") as conversation:
            first = await conversation.reply("Hi")
            server.revoke()
            return [first, await conversation.reply("Where is my order?")]

    with ThreadServer(auth=True) as server:
        answers = asyncio.run(run(JsonAgent(threads(server), 5.0), server))
        turns = server.seen("/threads/")
        issued = list(server.issued)
    assert [answer.text for answer in answers] == [
        "echo: Hi (turn 1)",
        "echo: Where is my order? (turn 2)",
    ], "the refused request was not acted on; the one sent again was, once"
    assert [(seen.method, seen.status) for seen in turns] == [
        ("POST", 200),
        ("POST", 401),
        ("POST", 200),
        ("DELETE", 204),
    ]
    assert turns[1].body == turns[2].body
    assert len(issued) == 2
    assert [seen.headers["authorization"] for seen in turns] == [f"Bearer {issued[0]}"] * 2 + [
        f"Bearer {issued[1]}"
    ] * 2


def test_conversations_refused_the_same_token_at_once_renew_it_once() -> None:
    async def run(agent: JsonAgent, server: ThreadServer) -> list[list[Answer]]:
        await agent.ready()
        said, revoked = asyncio.Barrier(4), asyncio.Barrier(4)

        async def one(n: int) -> list[Answer]:
            async with agent.conversation(f"c{n}") as conversation:
                first = await conversation.reply("Hi")
                await said.wait()
                if n == 0:
                    server.revoke()
                await revoked.wait()
                return [first, await conversation.reply("Bye")]

        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(one(n)) for n in range(4)]
        return [task.result() for task in tasks]

    with ThreadServer(auth=True) as server:
        answers = asyncio.run(run(JsonAgent(threads(server), 5.0), server))
        refused = [seen for seen in server.seen("/threads/") if seen.status == 401]
        issued = list(server.issued)
    assert all(
        [answer.text for answer in each] == ["echo: Hi (turn 1)", "echo: Bye (turn 2)"] for each in answers
    )
    assert len(refused) >= 1
    assert len(issued) == 2, "one renewal for every conversation the same token was refused in"


def test_an_agent_that_refuses_the_renewed_token_too_fails_the_turn() -> None:
    with ThreadServer(auth=True, refused_tokens=100) as server:
        with pytest.raises(AgentFailure) as caught:
            talk(JsonAgent(chat(server), 5.0), ["Hi"])
        agent_requests = server.agent_requests()
        issued = list(server.issued)
    assert caught.value.reason == "http_401"
    assert caught.value.message == "invalid_token"
    assert [seen.status for seen in agent_requests] == [401, 401], "renewed once, never again"
    assert len(issued) == 2
    assert not any(token in str(caught.value) for token in issued)


def test_a_renewal_the_endpoint_refuses_fails_the_attempt_in_its_words() -> None:
    async def run(agent: JsonAgent, server: ThreadServer) -> None:
        await agent.ready()
        server.client_secret = "rotated-secret-value"
        server.revoke()
        await converse(agent, "c1", ["Hi"])

    with ThreadServer(auth=True) as server, pytest.raises(AgentFailure) as caught:
        asyncio.run(run(JsonAgent(chat(server), 5.0), server))
    assert caught.value.reason == "auth_failed"
    assert caught.value.message.startswith("HTTP 401: invalid_client: Client authentication failed")
    assert SECRET not in f"{caught.value} {caught.value.message}"


# Renewed before it runs out (a clock the test moves; nothing sleeps)


def test_a_token_is_renewed_before_it_runs_out() -> None:
    clock = FakeClock()

    async def run(agent: JsonAgent) -> list[str]:
        await agent.ready()
        answers = [(await converse(agent, "c1", ["Hi"]))[0].text]
        await clock.sleep(100)  # of 120 s: more than a tenth is left
        answers += [(await converse(agent, "c2", ["Hi"]))[0].text]
        await clock.sleep(9)  # less than a tenth (12 s) is left
        answers += [(await converse(agent, "c3", ["Hi"]))[0].text]
        return answers

    with ThreadServer(auth=True, token_life=120) as server:
        answers = asyncio.run(run(JsonAgent(chat(server), 5.0, clock=clock)))
        agent_requests = server.agent_requests()
        issued = list(server.issued)
    assert answers == ["echo: Hi (turn 1)"] * 3
    assert len(issued) == 2
    assert [seen.headers["authorization"] for seen in agent_requests] == [
        f"Bearer {issued[0]}",
        f"Bearer {issued[0]}",
        f"Bearer {issued[1]}",
    ]
    assert all(seen.status == 200 for seen in agent_requests), "renewed before the agent could refuse it"


# Never shown


def test_a_token_the_agent_quotes_in_its_error_is_masked() -> None:
    with ThreadServer(auth=True) as server:
        with pytest.raises(AgentFailure) as caught:
            talk(JsonAgent(chat(server, "/leaky"), 5.0), ["Hi"])
        (token,) = server.issued
    assert caught.value.reason == "http_400"
    assert caught.value.message == "the request with Bearer *** was refused: scope chat.write is missing"
    assert token not in f"{caught.value} {caught.value.detail}"


# A token endpoint over HTTPS is checked even when the agent is plain HTTP


def test_an_https_token_endpoint_is_checked_when_the_agent_is_plain_http(
    request: pytest.FixtureRequest,
) -> None:
    files: Certificates = request.getfixturevalue("certificates")
    cert, key = files.path("server.pem"), files.path("server.key")
    with ThreadServer(auth=True) as server, TlsFront(server.url, cert, key) as front:
        untrusted = chat(server, auth={"oauth2": oauth(f"{front.url}/oauth/token")})
        with pytest.raises(ConfigurationError) as caught:
            talk(JsonAgent(untrusted, 5.0, untrusted.verify(files.folder)), ["Hi"])
        refused = list(server.grants)
        trusted = msgspec.structs.replace(
            untrusted, tls=msgspec.convert({"ca": "ca.pem"}, type(untrusted.tls))
        )
        (answer,) = talk(JsonAgent(trusted, 5.0, trusted.verify(files.folder)), ["Hi"])
    assert "no answer (ConnectError)" in caught.value.message
    assert refused == [], "the secret never went to a server whose certificate was not checked"
    assert answer.text == "echo: Hi (turn 1)"
    assert len(server.grants) == 1


def test_an_https_session_start_is_checked_when_the_agent_is_plain_http(
    request: pytest.FixtureRequest,
) -> None:
    files: Certificates = request.getfixturevalue("certificates")
    cert, key = files.path("server.pem"), files.path("server.key")
    with ThreadServer() as server, TlsFront(server.url, cert, key) as front:
        agent = msgspec.convert(
            {
                "url": f"{server.url}/threads/$session/runs",
                "body": {"message": "$message"},
                "answer": "messages.-1.content",
                "session": {"start": {"url": f"{front.url}/threads", "id": "thread_id"}},
            },
            AgentSpec,
        )
        with pytest.raises(AgentFailure) as caught:
            talk(JsonAgent(agent, 5.0, agent.verify(files.folder)), ["Hi"])
        started = server.seen("/threads")
    assert caught.value.reason == "session_failed"
    assert started == []


# Through the command


AGENT_FILE = """\
url: ${AGENT_URL}/threads/$session/runs
body: {"input": {"messages": [{"role": "user", "content": "$message"}]}}
answer: messages.-1.content
session:
  start: {url: "${AGENT_URL}/threads", id: thread_id}
  end: {url: "${AGENT_URL}/threads/$session", method: DELETE}
auth:
  oauth2: {token-url: "${AGENT_URL}/oauth/token", client-id: convy-ci, client-secret: "${CLIENT_SECRET}"}
"""

SCENARIO = """\
name: order
turns:
  - Where is order 4411?
  - Thanks.
checks:
  - contains: "Thanks. (turn 2)"
    in: last
"""


def project(folder: Path, agent: str = AGENT_FILE) -> Path:
    (folder / "agents").mkdir(parents=True)
    (folder / "scenarios").mkdir()
    (folder / "agents" / "secured.yaml").write_text(agent)
    (folder / "scenarios" / "order.yaml").write_text(SCENARIO)
    return folder


def play(folder: Path, server: ThreadServer) -> Any:
    return convy(
        "run",
        "--project",
        str(folder),
        "--repeat",
        "3",
        "--concurrency",
        "2",
        cwd=folder.parent,
        env={"AGENT_URL": server.url, "CLIENT_SECRET": SECRET},
    )


def shown_anywhere(done: Any, folder: Path, secrets: list[str]) -> list[str]:
    """Where any of `secrets` appears: the command's output, or any file under the results folder."""
    found = [
        name
        for name, text in (("stdout", done.stdout), ("stderr", done.stderr))
        if any(s in text for s in secrets)
    ]
    for path in (folder / "results").rglob("*") if (folder / "results").exists() else []:
        if path.is_file() and any(s.encode() in path.read_bytes() for s in secrets):
            found.append(str(path.relative_to(folder)))
    return found


def test_a_wrong_client_secret_is_exit_2_before_any_agent_request(tmp_path: Path) -> None:
    folder = project(tmp_path / "project")
    with ThreadServer(auth=True, client_secret="the-secret-it-really-has") as server:
        done = play(folder, server)
        agent_requests = server.agent_requests()
        grants = len(server.grants)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "invalid_client: Client authentication failed" in done.stdout + done.stderr
    # refused in the form, then asked once more with HTTP Basic (client_secret_basic)
    assert grants == 2 and agent_requests == []
    assert shown_anywhere(done, folder, [SECRET]) == []


def test_a_run_renews_a_refused_token_and_shows_neither_it_nor_the_secret(tmp_path: Path) -> None:
    folder = project(tmp_path / "project")
    with ThreadServer(auth=True, refused_tokens=1) as server:
        done = play(folder, server)
        issued = list(server.issued)
        refused = [seen for seen in server.agent_requests() if seen.status == 401]
    assert done.returncode == 0, done.stdout + done.stderr
    attempts = lines(only_run(folder / "results"))
    assert len(attempts) == 3 and all(attempt["decision"]["holds"] for attempt in attempts)  # type: ignore[index]
    assert len(issued) == 2, "the first token, and one renewal after the agent refused it"
    assert 1 <= len(refused) <= 2, "refused in the conversations that had sent it at once"
    assert shown_anywhere(done, folder, [SECRET, *issued]) == []


def test_a_token_an_agent_quotes_is_masked_in_the_run_folder(tmp_path: Path) -> None:
    agent = (
        "url: ${AGENT_URL}/leaky\nbody: {message: $message}\nanswer: answer\n"
        + AGENT_FILE[AGENT_FILE.index("auth:") :]
    )
    folder = project(tmp_path / "project", agent)
    with ThreadServer(auth=True) as server:
        done = play(folder, server)
        issued = list(server.issued)
    assert done.returncode == 1, done.stdout + done.stderr
    attempts = lines(only_run(folder / "results"))
    assert len(attempts) == 3
    for attempt in attempts:
        decision: dict[str, Any] = attempt["decision"]  # type: ignore[assignment]
        assert decision["reason"] == "http_400" and "Bearer ***" in decision["message"]
    assert shown_anywhere(done, folder, [SECRET, *issued]) == []


# A token endpoint that takes HTTP Basic only (client_secret_basic)


def test_an_endpoint_that_takes_basic_only_is_asked_again_with_basic_and_keeps_it() -> None:
    async def run(agent: JsonAgent) -> list[Answer]:
        await agent.ready()
        server.revoke()
        return await converse(agent, "c1", ["Hi"])

    with ThreadServer(auth=True, basic_only=True) as server:
        (answer,) = asyncio.run(run(JsonAgent(chat(server), 5.0)))
    assert answer.text == "echo: Hi (turn 1)"
    assert len(server.issued) == 2, "the first token, and the one after the agent refused it"
    form_first, basic, renewed = server.grants
    assert "client_secret" in form_first and "basic" not in form_first
    assert "client_secret" not in basic and basic["basic"].startswith("Basic ")
    assert "client_secret" not in renewed and renewed["basic"].startswith("Basic "), "Basic is kept"


def test_a_wrong_secret_asked_both_ways_quotes_both_answers() -> None:
    with (
        ThreadServer(auth=True, basic_only=True, client_secret="another-secret-entirely") as server,
        pytest.raises(ConfigurationError) as caught,
    ):
        talk(JsonAgent(chat(server), 5.0), ["Hi"])
    shown = str(caught.value)
    assert "HTTP 401: invalid_client: use HTTP Basic; asked with HTTP Basic: HTTP 401: invalid_" in shown
    assert SECRET not in shown and server.agent_requests() == []
