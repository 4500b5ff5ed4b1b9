"""Trace context (docs/traces.md) against real agents: every request of an attempt — its session's
start, each turn, a turn sent again, its session's end; whole and streamed; template, A2A and the
Responses API — carries a W3C `traceparent` with the attempt's trace id and a span id of its own,
what the attempt line records; the agent card and the token endpoint never do; trace-context off,
or a `traceparent` the agent file sets itself, sends none of convy's and records none; and an agent
instrumented with OpenTelemetry continues the attempt's trace."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

import msgspec
import pytest

from convy.fakes import FakeAgent, FakeJudge, FakeModel, MemoryJournal
from convy.play.agent import QueuedAgent
from convy.play.attempt import Attempt
from convy.play.bench import Bench
from convy.play.busy import Patience, Places
from convy.play.outcome import Outcome
from convy.play.rate import Pace
from convy.play.wire.agent import JsonAgent
from convy.play.wire.spec import AgentSpec
from tests.servers.a2a_agent import A2aAgent
from tests.servers.agents import AgentServer
from tests.servers.responses_server import ResponsesServer
from tests.servers.threads import ThreadServer
from tests.servers.traced_agent import TracedAgent
from tests.support.oauth_agents import chat
from tests.support.thread_agents import threads
from tests.support.traced import played, scripted

TRACEPARENT = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-01")


def parents(headers: Sequence[dict[str, str]]) -> list[tuple[str, str]]:
    """The (trace id, span id) of each request's traceparent; the header must be valid W3C."""
    found = []
    for seen in headers:
        match = TRACEPARENT.fullmatch(seen["traceparent"])
        assert match, seen["traceparent"]
        found.append((match.group(1), match.group(2)))
    return found


def spec(fields: dict[str, Any]) -> AgentSpec:
    return msgspec.convert(fields, AgentSpec)


# Every request of an attempt, one trace


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_every_request_of_an_attempt_carries_its_trace_with_a_span_of_its_own(streamed: bool) -> None:
    with ThreadServer() as server:
        agent = threads(server.url)
        if streamed:
            agent = msgspec.structs.replace(
                agent,
                url=f"{server.url}/threads/$session/runs/stream",
                body={
                    "input": {"messages": [{"role": "user", "content": "$message"}]},
                    "stream_mode": "values",
                },
                stream="sse",
                event="values",
                delta="messages.-1.content",
                join="last",
                answer="",
            )
        outcome = played(JsonAgent(agent, 5.0), "Hi", "Where is my order?")
        requests = server.seen()
    assert [turn.agent for turn in outcome.turns] == [
        "echo: Hi (turn 1)",
        "echo: Where is my order? (turn 2)",
    ]
    assert [(seen.method, seen.status) for seen in requests] == [
        ("POST", 200),
        ("POST", 200),
        ("POST", 200),
        ("DELETE", 204),
    ]
    sent = parents([seen.headers for seen in requests])
    assert {trace for trace, _ in sent} == {outcome.trace_id}
    assert outcome.trace_id.strip("0"), "a trace id is never all zeros"
    spans = [span for _, span in sent]
    assert len(set(spans)) == 4, "a new span id for each request"
    assert [turn.span_id for turn in outcome.turns] == spans[1:3]
    assert [(s.span_id, s.kind, s.status) for s in outcome.spans] == [
        (spans[0], "session_start", 200),
        (spans[1], "turn", 200),
        (spans[2], "turn", 200),
        (spans[3], "session_end", 204),
    ]
    ats = [s.at for s in outcome.spans]
    assert ats == sorted(ats) and all(s.seconds >= 0 for s in outcome.spans)


def test_the_attempt_line_keeps_the_trace_as_it_was_sent() -> None:
    with ThreadServer() as server:
        outcome = played(JsonAgent(threads(server.url), 5.0), "Hi")
    line = msgspec.json.decode(msgspec.json.encode(outcome))
    assert line["trace_id"] == outcome.trace_id and len(line["trace_id"]) == 32
    assert line["turns"][0]["span_id"] == outcome.turns[0].span_id
    assert [span["kind"] for span in line["spans"]] == ["session_start", "turn", "session_end"]
    assert set(line["spans"][0]) == {"span_id", "kind", "at", "seconds", "status"}
    assert msgspec.json.decode(msgspec.json.encode(outcome), type=Outcome) == outcome


def test_two_attempts_are_two_traces_each_request_in_its_own() -> None:
    with ThreadServer() as server:
        bench = Bench(agent=JsonAgent(threads(server.url), 5.0), user=FakeModel(), judge=FakeJudge())
        attempts = [Attempt(scenario=scripted("Hi", "Bye"), index=i, max_turns=5) for i in range(3)]
        outcomes = asyncio.run(bench.run(attempts, MemoryJournal()))
        requests = server.seen()
        kept = dict(server.kept)
    assert len({o.trace_id for o in outcomes}) == 3
    for outcome in outcomes:
        mine = [seen for seen in requests if parents([seen.headers])[0][0] == outcome.trace_id]
        assert len(mine) == 4
        threads_used = {seen.path.split("/")[2] for seen in mine[1:]}
        assert len(threads_used) == 1 and threads_used <= set(kept), "one attempt's requests, one thread"
        assert [s.span_id for s in outcome.spans] == [parents([s.headers])[0][1] for s in mine]


def test_a_turn_sent_again_after_a_401_is_a_request_of_its_own_and_the_answered_one_is_the_turns() -> None:
    with ThreadServer(auth=True, refused_tokens=1) as server:
        outcome = played(JsonAgent(chat(server), 5.0), "Hi", ready=True)
        turns = server.seen("/chat")
        token = server.seen("/oauth/token")
    assert [seen.status for seen in turns] == [401, 200]
    (first, _), (second, answered) = parents([seen.headers for seen in turns])
    assert first == second == outcome.trace_id
    assert [(s.kind, s.status) for s in outcome.spans] == [("turn", 401), ("turn", 200)]
    assert outcome.turns[0].span_id == answered == outcome.spans[1].span_id
    assert token, "a token was asked for"
    assert all("traceparent" not in seen.headers for seen in token), "the token endpoint is not the agent"


# The protocols


@pytest.mark.parametrize("stream", ["none", "sse"])
def test_a2a_messages_carry_the_trace_and_the_agent_card_does_not(stream: str) -> None:
    with A2aAgent() as server:
        agent = spec({"url": f"{server.url}/message", "protocol": "a2a", "stream": stream})
        outcome = played(JsonAgent(agent, 10.0), "Hi", "Bye", ready=True)
        messages = server.seen("/message")
        card = [seen for seen in server.requests if "agent-card" in seen.path]
    assert [turn.agent for turn in outcome.turns] == ["echo: Hi\nAnything else?", "echo: Bye\nAnything else?"]
    sent = parents([seen.headers for seen in messages])
    assert [trace for trace, _ in sent] == [outcome.trace_id] * 2
    assert [turn.span_id for turn in outcome.turns] == [span for _, span in sent]
    assert card and all("traceparent" not in seen.headers for seen in card), "the card belongs to no attempt"


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_responses_turns_carry_the_trace(streamed: bool) -> None:
    with ResponsesServer() as server:
        fields: dict[str, Any] = {"url": f"{server.url}/v1/responses", "protocol": "openai-responses"}
        fields |= {"model": "echo", "stream": "sse" if streamed else "none"}
        outcome = played(JsonAgent(spec(fields), 5.0), "Hi", "Bye")
        requests = server.requests
    assert len(requests) == 2
    sent = parents([seen.headers for seen in requests])
    assert [trace for trace, _ in sent] == [outcome.trace_id] * 2
    assert [turn.span_id for turn in outcome.turns] == [span for _, span in sent]


# Off, or the agent file's own


def test_trace_context_off_sends_no_traceparent_and_records_none() -> None:
    with ThreadServer() as server:
        outcome = played(JsonAgent(threads(server.url), 5.0, traced=False), "Hi")
        requests = server.seen()
    assert len(requests) == 3 and all("traceparent" not in seen.headers for seen in requests)
    assert outcome.trace_id == "" and outcome.spans == ()
    assert [turn.span_id for turn in outcome.turns] == [""]


def test_a_traceparent_the_agent_file_sets_goes_as_it_is_and_convy_records_no_trace() -> None:
    own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    with ThreadServer() as server:
        agent = msgspec.structs.replace(threads(server.url), headers={"TraceParent": own})
        outcome = played(JsonAgent(agent, 5.0), "Hi")
        requests = server.seen()
    assert [seen.headers["traceparent"] for seen in requests] == [own] * 3
    assert outcome.trace_id == "" and outcome.spans == () and outcome.turns[0].span_id == ""


def test_an_agent_that_sends_no_request_of_convys_has_no_trace() -> None:
    async def run() -> Outcome:
        return await Attempt(scenario=scripted("Hi"), index=0, max_turns=3).outcome(
            FakeAgent(["Hello"]), FakeModel(), FakeJudge()
        )

    outcome = asyncio.run(run())
    assert outcome.turns[0].agent == "Hello"
    assert outcome.trace_id == "" and outcome.spans == () and outcome.turns[0].span_id == ""


# An agent instrumented with OpenTelemetry continues the trace


def test_an_agent_instrumented_with_opentelemetry_continues_the_attempts_trace() -> None:
    with TracedAgent() as server:
        agent = spec({"url": f"{server.url}/chat", "body": {"message": "$message"}, "answer": "reply"})
        outcome = played(JsonAgent(agent, 5.0), "Hi", "Bye")
        turns = server.spans("agent.turn")
        tools = server.spans("agent.tool")
    assert [turn.agent for turn in outcome.turns] == ["echo: Hi", "echo: Bye"]
    assert [format(span.context.trace_id, "032x") for span in turns] == [outcome.trace_id] * 2
    assert [format(span.parent.span_id, "016x") for span in turns if span.parent] == [
        turn.span_id for turn in outcome.turns
    ], "the agent's span is a child of the request convy sent"
    assert all(span.parent and span.parent.is_remote for span in turns)
    assert [format(span.context.trace_id, "032x") for span in tools] == [outcome.trace_id] * 2


def test_a_turn_the_busy_agent_refused_and_was_sent_again_is_a_span_of_its_own() -> None:
    with AgentServer() as server:
        agent = spec(
            {
                "url": f"{server.url}/retry-after/1",
                "body": {"messages": "$messages", "session": "$conversation"},
            }
        )
        queued = QueuedAgent(JsonAgent(agent, 5.0), Places(1, Pace(0), Patience(10)))

        async def run() -> Outcome:
            return await Attempt(scenario=scripted("Hi", "Bye"), index=0, max_turns=5).outcome(
                queued, FakeModel(), FakeJudge()
            )

        outcome = asyncio.run(run())
        requests = server.requests
    assert [seen.status for seen in requests] == [429, 200, 200]
    sent = parents([seen.headers for seen in requests])
    assert {trace for trace, _ in sent} == {outcome.trace_id}
    assert [(s.span_id, s.kind, s.status) for s in outcome.spans] == [
        (sent[0][1], "turn", 429),
        (sent[1][1], "turn", 200),
        (sent[2][1], "turn", 200),
    ]
    assert [turn.span_id for turn in outcome.turns] == [sent[1][1], sent[2][1]]
