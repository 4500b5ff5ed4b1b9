"""JsonAgent against a real local agent that misbehaves on request (tests/servers/agents.py):
answers, body templates, tokens and steps, one kept connection per conversation, and every fault
docs/agents.md names — Busy for 429/503 (a retry sends the message once), AgentFailure for the rest."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import time
import tracemalloc
from pathlib import Path

import certifi
import msgspec
import pytest

from convy.conduct.run import Clients, Run
from convy.errors import ConfigurationError
from convy.fakes import FakeClock, MemoryJournal
from convy.play.agent import AgentFailure, Answer, Call, QueuedAgent, Thought, Usage
from convy.play.busy import Busy, Patience, Places
from convy.play.model import Models, OpenAiModel
from convy.play.outcome import Outcome
from convy.play.rate import Pace
from convy.play.wire.agent import JsonAgent
from convy.play.wire.spec import AgentSpec
from convy.play.wire.tls import Tls
from convy.play.wire.tokens import TokenPaths
from convy.project.document import Declaration
from convy.project.scenario import Scenario
from convy.store.runfile import Limits, Provenance
from tests.servers.agents import AgentServer, TlsFront
from tests.servers.models import ModelServer
from tests.support.certificates import Certificates

SECRET = "s3cr3t-VALUE-42"
SESSION_BODY = {"messages": "$messages", "session": "$conversation"}


def spec(url: str, **fields: object) -> AgentSpec:
    return msgspec.convert({"url": url, **fields}, AgentSpec)


def talk(agent: AgentSpec, texts: list[str], key: str = "c1", timeout: float = 5.0) -> list[Answer]:
    async def run() -> list[Answer]:
        async with JsonAgent(agent, timeout).conversation(key) as conversation:
            return [await conversation.reply(text) for text in texts]

    return asyncio.run(run())


def failure(agent: AgentSpec, timeout: float = 5.0) -> AgentFailure:
    """The AgentFailure of a first turn, checked to show no secret (header values, the query)."""
    with pytest.raises(AgentFailure) as caught:
        talk(agent, ["hi"], timeout=timeout)
    shown = f"{caught.value} {caught.value.detail}"
    assert SECRET not in shown
    assert "?" not in shown
    return caught.value


def secret(server: AgentServer, path: str, **fields: object) -> AgentSpec:
    """A spec for `path` with a secret in its query and in a header."""
    return spec(f"{server.url}{path}?key={SECRET}", headers={"Authorization": f"Bearer {SECRET}"}, **fields)


# Answers


def test_an_openai_compatible_agent_by_default() -> None:
    with AgentServer() as server:
        first, second = talk(spec(f"{server.url}/ok"), ["Hi", "My order is late"])
    assert first == Answer(text="echo: Hi", usage=Usage(input=2, output=8))
    assert second.text == "echo: My order is late"
    assert second.usage == Usage(input=len("Hi") + len("echo: Hi") + len("My order is late"), output=22)
    assert first.steps == ()
    assert [seen.body for seen in server.requests] == [
        {"messages": [{"role": "user", "content": "Hi"}]},
        {
            "messages": [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "echo: Hi"},
                {"role": "user", "content": "My order is late"},
            ]
        },
    ]
    assert server.requests[0].headers["content-type"] == "application/json"
    assert server.requests[0].headers["accept"] == "application/json"


def test_headers_are_sent_and_may_replace_the_defaults() -> None:
    with AgentServer() as server:
        talk(spec(f"{server.url}/ok", headers={"X-Team": "care", "accept": "*/*"}), ["Hi"])
    assert server.requests[0].headers["x-team"] == "care"
    assert server.requests[0].headers["accept"] == "*/*"


def test_steps_of_every_kind() -> None:
    with AgentServer() as server:
        (answer,) = talk(spec(f"{server.url}/ok", steps="trace"), ["Hi"])
    assert answer.steps == (
        Thought(text="I should look the order up."),
        Call(name="lookup", arguments='{"order":4411}', result='{"status":"lost"}'),
        Call(name="refund", arguments="4411", result="ok"),
        Call(name="notify", arguments='{"to": "dana"}', result=""),
        Thought(text="All done."),
        Thought(text="42"),
    )


def test_steps_at_a_path_that_is_not_there_are_none() -> None:
    with AgentServer() as server:
        (answer,) = talk(spec(f"{server.url}/ok", steps="debug.trace"), ["Hi"])
    assert answer.steps == ()
    assert answer.text == "echo: Hi"


def test_a_custom_body_and_answer() -> None:
    template = {
        "input": "$message",
        "session": "$conversation",
        "history": "$messages",
        "meta": {"fixed": [1, "$message", None], "label": "$messages are kept"},
    }
    with AgentServer() as server:
        agent = spec(
            f"{server.url}/custom",
            body=template,
            answer="data.outputs.0.text",
            tokens={"input": "stats.in", "output": "stats.out"},
            steps="trace",
        )
        first, second = talk(agent, ["Hello", "Order 4411"], key="refund-late-order/0")
    assert first == Answer(
        text="custom: Hello",
        usage=Usage(input=5, output=13),
        steps=(Call(name="search", arguments='{"q":"Hello"}', result='["a","b"]'),),
    )
    assert second.text == "custom: Order 4411"
    assert server.requests[1].body == {
        "input": "Order 4411",
        "session": "refund-late-order/0",
        "history": [
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "custom: Hello"},
            {"role": "user", "content": "Order 4411"},
        ],
        "meta": {"fixed": [1, "Order 4411", None], "label": "$messages are kept"},
    }


def test_a_number_answer_is_its_json_text() -> None:
    with AgentServer() as server:
        (answer,) = talk(spec(f"{server.url}/number-answer"), ["Hi"])
    assert answer.text == "42"


# Tokens: missing is unknown, never 0


def test_an_answer_without_usage_has_unknown_tokens() -> None:
    with AgentServer() as server:
        (answer,) = talk(spec(f"{server.url}/no-usage"), ["Hi"])
    assert answer.usage is None


def test_a_count_not_reported_is_unknown() -> None:
    with AgentServer() as server:
        (answer,) = talk(spec(f"{server.url}/half-usage"), ["Hi"])
    assert answer.usage == Usage(input=2, output=None)


def test_without_token_paths_nothing_is_read() -> None:
    with AgentServer() as server:
        (answer,) = talk(spec(f"{server.url}/ok", tokens={}), ["Hi"])
    assert answer.usage is None


def test_a_token_count_that_is_not_a_count_is_unknown() -> None:
    paths = TokenPaths(input="choices.0.message.content", output="usage.prompt_tokens")
    with AgentServer() as server:
        (answer,) = talk(msgspec.structs.replace(spec(f"{server.url}/ok"), tokens=paths), ["Hi"])
    assert answer.usage == Usage(input=None, output=2)


# ${VAR}


def test_variables_are_read_from_the_environment() -> None:
    with AgentServer() as server:
        declared = spec(
            "${AGENT_BASE}/ok", headers={"Authorization": "Bearer ${AGENT_TOKEN}", "X-Plain": "p"}
        )
        resolved = declared.resolved({"AGENT_BASE": server.url, "AGENT_TOKEN": SECRET}, "agents/a.yaml")
        (answer,) = talk(resolved, ["Hi"])
    assert answer.text == "echo: Hi"
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert server.requests[0].headers["x-plain"] == "p"
    assert SECRET not in repr(resolved)
    assert SECRET not in repr(JsonAgent(resolved, 5.0))


@pytest.mark.parametrize(
    ("environ", "missing"),
    [({"AGENT_TOKEN": SECRET}, "AGENT_BASE"), ({"AGENT_BASE": "http://a.example"}, "AGENT_TOKEN")],
)
def test_a_variable_not_set_is_a_configuration_error(environ: dict[str, str], missing: str) -> None:
    declared = spec("${AGENT_BASE}/chat", headers={"Authorization": "Bearer ${AGENT_TOKEN}"})
    with pytest.raises(ConfigurationError) as caught:
        declared.resolved(environ, "agents/support.yaml")
    assert caught.value.where == "agents/support.yaml"
    assert caught.value.message == f"variable {missing} is not set"
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize("url", ["${BASE}/chat", "ftp://${HOST}/chat", "${HOST}"])
def test_a_url_that_is_not_http_is_a_configuration_error(url: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        spec(url).resolved({"BASE": f"not a url {SECRET}", "HOST": f"{SECRET}.example"}, "agent-url")
    assert caught.value.where == "agent-url"
    assert SECRET not in str(caught.value)


def test_a_header_value_with_a_line_break_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError) as caught:
        spec("http://a.example", headers={"X-Key": "${KEY}"}).resolved({"KEY": f"{SECRET}\r\nX: y"}, "w")
    assert "X-Key" in str(caught.value)
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"answer": "reply..text"}, "empty part"),
        ({"steps": ".trace"}, "empty part"),
        ({"tokens": {"input": "usage."}}, "empty part"),
        ({"tokens": {"inputs": "usage.in"}}, "unknown field"),
        ({"unknown": 1}, "unknown field"),
        ({"url": ""}, "url must not be empty"),
        ({"tls": {"key": "client.key"}}, "tls.key needs tls.cert"),
    ],
)
def test_a_bad_agent_file_is_refused(fields: dict[str, object], message: str) -> None:
    with pytest.raises(msgspec.ValidationError, match=message):
        msgspec.convert({"url": "http://a.example", **fields}, AgentSpec)


# One connection per conversation


def test_one_connection_is_kept_for_each_conversation() -> None:
    async def run(agent: JsonAgent) -> None:
        async def converse(key: str) -> None:
            async with agent.conversation(key) as conversation:
                for text in ("one", "two", "three"):
                    await conversation.reply(f"{key}: {text}")

        async with asyncio.TaskGroup() as group:
            group.create_task(converse("a"))
            group.create_task(converse("b"))

    with AgentServer() as server:
        asyncio.run(run(JsonAgent(spec(f"{server.url}/ok", body=SESSION_BODY), 5.0)))
    assert len([seen for seen in server.requests if seen.session == "a"]) == 3
    assert len([seen for seen in server.requests if seen.session == "b"]) == 3
    assert len(server.connections("a")) == 1
    assert len(server.connections("b")) == 1
    assert server.connections("a") != server.connections("b")


def test_a_turn_before_opening_is_a_mistake() -> None:
    with pytest.raises(RuntimeError, match="async with"):
        asyncio.run(JsonAgent(spec("http://a.example"), 5.0).conversation("c").reply("Hi"))


# Busy: refused unprocessed, may be sent again — and then arrives once


def test_a_429_is_busy_and_sending_the_turn_again_sends_the_message_once() -> None:
    async def run(agent: JsonAgent) -> tuple[Busy, Answer, Answer]:
        async with agent.conversation("c1") as conversation:
            with pytest.raises(Busy) as caught:
                await conversation.reply("Hi")
            again = await conversation.reply("Hi")
            later = await conversation.reply("Thanks")
            return caught.value, again, later

    with AgentServer() as server:
        busy, again, later = asyncio.run(
            run(JsonAgent(spec(f"{server.url}/retry-after/1", body=SESSION_BODY), 5.0))
        )
    assert busy.retry_after == 1.0
    assert "429" in busy.detail
    assert again.text == "echo: Hi"
    assert later.text == "echo: Thanks"
    assert server.seen["Hi"] == 2
    assert server.processed == {"Hi": 1, "Thanks": 1}
    assert [seen.status for seen in server.requests] == [429, 200, 200]
    assert server.requests[1].body["messages"] == [{"role": "user", "content": "Hi"}]
    assert server.requests[2].body["messages"] == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "echo: Hi"},
        {"role": "user", "content": "Thanks"},
    ]
    assert len(server.connections("c1")) == 1


def test_places_wait_as_asked_and_the_agent_sees_the_message_once() -> None:
    async def run(agent: QueuedAgent) -> list[str]:
        async with agent.conversation("c1") as conversation:
            return [(await conversation.reply(text)).text for text in ("Hi", "Bye")]

    with AgentServer() as server:
        places = Places(1, Pace(0), Patience(10))
        agent = QueuedAgent(JsonAgent(spec(f"{server.url}/retry-after/1", body=SESSION_BODY), 5.0), places)
        started = time.monotonic()
        texts = asyncio.run(run(agent))
        waited = time.monotonic() - started
    assert texts == ["echo: Hi", "echo: Bye"]
    assert waited >= 0.95
    assert server.processed == {"Hi": 1, "Bye": 1}
    assert server.requests[-1].body["messages"] == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "echo: Hi"},
        {"role": "user", "content": "Bye"},
    ]


def test_an_agent_behind_litellm_is_asked_again_after_the_wait_its_router_named() -> None:
    clock = FakeClock()

    async def run(agent: QueuedAgent) -> str:
        async with agent.conversation("c1") as conversation:
            return (await conversation.reply("Hi")).text

    with AgentServer() as server:
        places = Places(1, Pace(0), Patience(300, clock=clock))
        agent = QueuedAgent(JsonAgent(spec(f"{server.url}/litellm-429/60", body=SESSION_BODY), 5.0), places)
        text = asyncio.run(run(agent))
    assert text == "echo: Hi"
    assert clock.slept == [60.0], "one wait, as long as the router asked, instead of a backoff of many tries"
    assert [seen.status for seen in server.requests] == [429, 200]


def test_retry_after_as_an_http_date() -> None:
    with AgentServer() as server, pytest.raises(Busy) as caught:
        talk(spec(f"{server.url}/retry-after-date", body=SESSION_BODY), ["Hi"])
    assert caught.value.retry_after is not None
    assert 25 <= caught.value.retry_after <= 31
    assert "503" in caught.value.detail


@pytest.mark.parametrize("status", [429, 503])
def test_a_refusal_without_retry_after_is_busy_for_a_while_unknown(status: int) -> None:
    with AgentServer() as server, pytest.raises(Busy) as caught:
        talk(secret(server, f"/status/{status}"), ["Hi"])
    assert caught.value.retry_after is None
    assert SECRET not in str(caught.value)
    assert "?" not in str(caught.value)
    assert server.processed == {}


# Failures: the agent may have acted, so the turn is never sent again


@pytest.mark.parametrize("status", [500, 502, 504, 404, 401, 400, 302])
def test_any_other_error_status_fails_the_turn_once(status: int) -> None:
    with AgentServer() as server:
        error = failure(secret(server, f"/status/{status}"))
        assert f"{server.url}/status/{status}" in error.detail
    assert error.reason == f"http_{status}"
    assert server.seen["hi"] == 1


def test_a_read_timeout_fails_the_turn() -> None:
    with AgentServer(slow=60.0) as server:
        error = failure(secret(server, "/slow"), timeout=0.3)
    assert error.reason == "timeout", "the answer would only come after 60 s: the turn's 0.3 s ended it"
    assert server.seen["hi"] == 1


def test_a_refused_connection_fails_the_turn() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    error = failure(spec(f"http://127.0.0.1:{port}/chat?key={SECRET}", headers={"X-Key": SECRET}))
    assert error.reason == "connection"
    assert f"127.0.0.1:{port}/chat" in error.detail


def test_an_answer_that_is_not_json_is_a_bad_answer() -> None:
    with AgentServer() as server:
        error = failure(secret(server, "/not-json"))
    assert error.reason == "bad_answer"
    assert "not JSON" in error.detail


def test_an_answer_without_the_answer_path_names_the_path() -> None:
    with AgentServer() as server:
        error = failure(secret(server, "/no-answer"))
    assert error.reason == "bad_answer"
    assert "nothing at `choices.0.message.content`" in error.detail
    assert "its top-level keys are `choices`, `usage`" in error.detail


def test_an_answer_that_is_not_text_is_a_bad_answer() -> None:
    with AgentServer() as server:
        error = failure(secret(server, "/object-answer"))
    assert error.reason == "bad_answer"
    assert "'choices.0.message.content'" in error.detail


@pytest.mark.parametrize("path", ["/huge", "/huge-gzip"])
def test_an_answer_over_4_mib_is_too_large_and_is_not_read_whole(path: str) -> None:
    with AgentServer() as server:
        failure(secret(server, path))  # the server makes its answer once, outside the measure
        tracemalloc.start()
        try:
            error = failure(secret(server, path))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert error.reason == "answer_too_large"
    assert "4 MiB" in error.detail
    assert peak < 8_000_000


def test_a_failed_turn_leaves_the_dialogue_as_it_was() -> None:
    async def run(agent: JsonAgent) -> Answer:
        async with agent.conversation("c1") as conversation:
            with pytest.raises(AgentFailure):
                await conversation.reply("first")
            return await conversation.reply("second")

    with AgentServer() as server:
        agent = JsonAgent(spec(f"{server.url}/no-answer"), 5.0)
        with pytest.raises(AgentFailure):
            asyncio.run(run(agent))
    assert [seen.body["messages"] for seen in server.requests] == [
        [{"role": "user", "content": "first"}],
        [{"role": "user", "content": "second"}],
    ]


# TLS


def test_without_tls_settings_one_verifying_context_is_made_for_every_conversation() -> None:
    context = Tls().context(Path("."))
    assert isinstance(context, ssl.SSLContext) and context.verify_mode == ssl.CERT_REQUIRED


def test_a_ca_bundle_makes_a_context_that_checks_certificates(tmp_path: Path) -> None:
    (tmp_path / "ca.pem").write_bytes(Path(certifi.where()).read_bytes())
    context = Tls(ca="ca.pem").context(tmp_path)
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.cert_store_stats()["x509_ca"] > 10


@pytest.mark.parametrize(
    ("tls", "where", "named"),
    [
        (Tls(ca="certs/ca.pem"), "tls.ca", "certs/ca.pem"),
        (Tls(cert="certs/client.pem"), "tls.cert", "certs/client.pem"),
        (Tls(cert="client.pem", key="certs/client.key"), "tls.key", "certs/client.key"),
    ],
)
def test_a_missing_tls_file_is_a_configuration_error(
    tmp_path: Path, tls: Tls, where: str, named: str
) -> None:
    (tmp_path / "client.pem").write_text("not a certificate")
    with pytest.raises(ConfigurationError) as caught:
        tls.context(tmp_path)
    assert caught.value.where == where
    assert named in caught.value.message


@pytest.mark.parametrize(("tls", "where"), [(Tls(ca="bad.pem"), "tls.ca"), (Tls(cert="bad.pem"), "tls.cert")])
def test_a_tls_file_that_is_not_a_certificate_is_a_configuration_error(
    tmp_path: Path, tls: Tls, where: str
) -> None:
    (tmp_path / "bad.pem").write_text("-----BEGIN CERTIFICATE-----\nnonsense\n-----END CERTIFICATE-----\n")
    with pytest.raises(ConfigurationError) as caught:
        tls.context(tmp_path)
    assert caught.value.where == where
    assert "bad.pem" in caught.value.message


# HTTPS against a local CA, with and without a client certificate


def https(certificates: Certificates, tls: Tls, client_ca: bool = False) -> tuple[list[str], list[str]]:
    """The answers to two turns over HTTPS, and the backend connections they came on."""
    with (
        AgentServer() as server,
        TlsFront(
            server.url,
            certificates.path("server.pem"),
            certificates.path("server.key"),
            certificates.path("ca.pem") if client_ca else None,
        ) as front,
    ):
        agent = JsonAgent(spec(f"{front.url}/ok", body=SESSION_BODY), 5.0, tls.context(certificates.folder))
        return asyncio.run(converse(agent)), sorted(server.connections("c1"))


async def converse(agent: JsonAgent) -> list[str]:
    async with agent.conversation("c1") as conversation:
        return [(await conversation.reply(text)).text for text in ("Hi", "Bye")]


def test_https_with_the_agents_own_ca(certificates: Certificates) -> None:
    answers, connections = https(certificates, Tls(ca="ca.pem"))
    assert answers == ["echo: Hi", "echo: Bye"]
    assert len(connections) == 1


def test_https_checks_the_certificate_against_the_system_cas_by_default(certificates: Certificates) -> None:
    with pytest.raises(AgentFailure) as caught:
        https(certificates, Tls())
    assert caught.value.reason == "connection"


def test_a_client_certificate(certificates: Certificates) -> None:
    answers, _ = https(certificates, Tls(ca="ca.pem", cert="client.pem", key="client.key"), client_ca=True)
    assert answers == ["echo: Hi", "echo: Bye"]


def test_without_the_client_certificate_it_asks_for_the_turn_fails(certificates: Certificates) -> None:
    with pytest.raises(AgentFailure) as caught:
        https(certificates, Tls(ca="ca.pem"), client_ca=True)
    assert caught.value.reason == "connection"


# Kept connections handed from conversation to conversation within a run (decision 21)


def conversations(agent: JsonAgent, rounds: list[list[str]], kept: bool) -> None:
    """Each round's conversations at once (three turns each), one round after another; inside the
    run's scope for kept connections when `kept`."""

    async def converse(key: str) -> None:
        async with agent.conversation(key) as conversation:
            for text in ("one", "two", "three"):
                await conversation.reply(f"{key}: {text}")
                await asyncio.sleep(0)

    async def run() -> None:
        async with agent.kept() if kept else contextlib.nullcontext():
            for keys in rounds:
                async with asyncio.TaskGroup() as group:
                    for key in keys:
                        group.create_task(converse(key))

    asyncio.run(run())


def test_in_a_run_a_conversation_takes_over_the_kept_connection_of_one_that_closed() -> None:
    with AgentServer() as server:
        conversations(JsonAgent(spec(f"{server.url}/ok", body=SESSION_BODY), 5.0), [["a"], ["b"]], kept=True)
    assert len(server.connections("a")) == 1
    assert server.connections("a") == server.connections("b")


def test_outside_a_run_each_conversation_has_a_connection_of_its_own() -> None:
    with AgentServer() as server:
        conversations(JsonAgent(spec(f"{server.url}/ok", body=SESSION_BODY), 5.0), [["a"], ["b"]], kept=False)
    assert len(server.connections("a")) == 1
    assert len(server.connections("b")) == 1
    assert server.connections("a") != server.connections("b")


def test_in_a_run_conversations_open_at_once_never_share_a_connection() -> None:
    rounds = [["a1", "a2", "a3"], ["b1", "b2", "b3"], ["c1", "c2"]]
    with AgentServer() as server:
        conversations(JsonAgent(spec(f"{server.url}/ok", body=SESSION_BODY), 5.0), rounds, kept=True)
        requests = list(server.requests)
    for keys in rounds:
        used = [server.connections(key) for key in keys]
        assert all(len(connections) == 1 for connections in used), "one connection for all its turns"
        assert len(set().union(*used)) == len(keys), "never another open conversation's connection"
    assert len({seen.connection for seen in requests}) == 3, "later rounds are served on kept connections"
    for connection in {seen.connection for seen in requests}:
        sessions = [seen.session for seen in requests if seen.connection == connection]
        finished = [session for at, session in enumerate(sessions) if session not in sessions[at + 1 :]]
        assert sessions == sorted(sessions, key=finished.index), "one conversation after another"


def test_a_run_over_https_pays_a_handshake_for_each_conversation_at_once_not_for_each_conversation(
    certificates: Certificates, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the models' client checks TLS as httpx does by default: against SSL_CERT_FILE when it is set
    monkeypatch.setenv("SSL_CERT_FILE", certificates.path("ca.pem"))
    cert, key = certificates.path("server.pem"), certificates.path("server.key")
    scenario = msgspec.convert(
        {"name": "s", "user": "a user", "claims": ["The agent answers."], "max_turns": 3}, Scenario
    )

    async def play(agent: JsonAgent, models_url: str) -> tuple[Outcome, ...]:
        async with Clients(5.0, 2, models_url).client() as client:
            model = OpenAiModel(url=models_url, key="k", name="m", client=client)
            models = Models(user=model, judge=model)
            run = Run.planned(
                folder=tmp_path / "run",
                agent="agent",
                declarations=(Declaration(scenario=scenario, file="s.yaml", line=1, claim_lines=(4,)),),
                repeat=8,
                models=models,
                limits=Limits(concurrency=2, turn_timeout=5.0),
                provenance=Provenance(),
            )
            return await run.play(agent, models, MemoryJournal())

    with (
        AgentServer() as server,
        TlsFront(server.url, cert, key) as agent_front,
        ModelServer(lambda request: "Hello, where is my order?") as model_server,
        TlsFront(model_server.url.removesuffix("/v1"), cert, key) as model_front,
    ):
        agent = JsonAgent(
            spec(f"{agent_front.url}/ok", body=SESSION_BODY),
            5.0,
            Tls(ca="ca.pem").context(certificates.folder),
        )
        outcomes = asyncio.run(play(agent, f"{model_front.url}/v1"))
        requests = len(server.requests)
    assert len(outcomes) == 8 and requests == 8 * 3, "every conversation played all its turns over https"
    assert agent_front.handshakes <= 2, "the agent: one handshake for each conversation at once (2)"
    assert model_front.handshakes <= 4, (
        "the models: one for each request at once (a turn and a judge's call for each)"
    )
