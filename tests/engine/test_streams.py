"""Streamed answers of the template protocol (docs/agents.md) against a real ASGI agent
(tests/servers/threads.py): SSE with named events or the name only in the data's `type` (Vercel AI
SDK UI streams), LangGraph `values` snapshots (`join: last`) and `messages-tuple` chunks, NDJSON,
plain text; the time to the first piece of text; a stream that breaks (`stream_broken`, never sent
again) and one that says nothing (`empty_answer`)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from convy.play.agent import AgentFailure, Answer, Usage
from convy.play.wire.agent import JsonAgent
from convy.play.wire.spec import AgentSpec
from tests.servers.threads import ThreadServer
from tests.support.command import convy, lines, only_run

ASKED = "Where is order 4411?"
ECHO = f"echo: {ASKED}"
VERCEL_TOKENS = {"input": "messageMetadata.usage.inputTokens", "output": "messageMetadata.usage.outputTokens"}


def spec(url: str, **fields: object) -> AgentSpec:
    return msgspec.convert({"url": url, "body": {"message": "$message"}, **fields}, AgentSpec)


def talk(agent: AgentSpec, texts: list[str]) -> list[Answer]:
    async def run() -> list[Answer]:
        async with JsonAgent(agent, 5.0).conversation("c1") as conversation:
            return [await conversation.reply(text) for text in texts]

    return asyncio.run(run())


def one(agent: AgentSpec) -> Answer:
    (answer,) = talk(agent, [ASKED])
    return answer


# Server-Sent Events


@pytest.mark.parametrize("path", ["/stream/vercel-named", "/stream/vercel"])
def test_only_the_named_events_deltas_make_the_answer(path: str) -> None:
    with ThreadServer() as server:
        agent = spec(
            f"{server.url}{path}", stream="sse", delta="delta", event="text-delta", tokens=VERCEL_TOKENS
        )
        answer = one(agent)
        (seen,) = server.seen()
    assert answer.text == ECHO, "the reasoning-delta beside the text deltas is no part of the answer"
    assert answer.usage == Usage(input=len(ASKED), output=len(ECHO)), "from the finish part"
    assert answer.first is not None and answer.first >= 0
    assert seen.headers["accept"] == "text/event-stream"
    assert seen.body == {"message": ASKED}


def test_without_an_event_name_every_events_delta_is_text() -> None:
    with ThreadServer() as server:
        answer = one(spec(f"{server.url}/stream/vercel", stream="sse", delta="delta"))
    assert answer.text == f"Thinking it over. {ECHO}"


def test_a_langgraph_values_stream_is_its_last_snapshot() -> None:
    with ThreadServer() as server:
        last = one(
            spec(f"{server.url}/stream/values", stream="sse", delta="messages.-1.content", join="last")
        )
        appended = one(spec(f"{server.url}/stream/values", stream="sse", delta="messages.-1.content"))
    assert last.text == ECHO
    assert appended.text.startswith(f"{ASKED}echo: echo: Where ") and appended.text.endswith(ECHO), (
        "appended, every snapshot (the user's message first) would be said again"
    )


def test_a_langgraph_thread_streamed_as_message_tuples() -> None:
    with ThreadServer() as server:
        agent = msgspec.convert(
            {
                "url": f"{server.url}/threads/$session/runs/stream",
                "body": {
                    "input": {"messages": [{"role": "user", "content": "$message"}]},
                    "stream_mode": "messages-tuple",
                },
                "stream": "sse",
                "event": "messages",
                "delta": "0.content",
                "tokens": {
                    "input": "0.usage_metadata.input_tokens",
                    "output": "0.usage_metadata.output_tokens",
                },
                "session": {"start": {"url": f"{server.url}/threads", "id": "thread_id"}},
            },
            AgentSpec,
        )
        answers = talk(agent, ["Hi", "Bye"])
    assert [answer.text for answer in answers] == ["echo: Hi (turn 1)", "echo: Bye (turn 2)"]
    assert answers[1].usage == Usage(input=3, output=len("echo: Bye (turn 2)"))


def test_a_langgraph_thread_streamed_as_values() -> None:
    with ThreadServer() as server:
        agent = msgspec.convert(
            {
                "url": f"{server.url}/threads/$session/runs/stream",
                "body": {
                    "input": {"messages": [{"role": "user", "content": "$message"}]},
                    "stream_mode": "values",
                },
                "stream": "sse",
                "event": "values",
                "delta": "messages.-1.content",
                "join": "last",
                "session": {"start": {"url": f"{server.url}/threads", "id": "thread_id"}},
            },
            AgentSpec,
        )
        answers = talk(agent, ["Hi", "Bye"])
    assert [answer.text for answer in answers] == ["echo: Hi (turn 1)", "echo: Bye (turn 2)"]


# NDJSON and plain text


def test_an_ndjson_stream() -> None:
    with ThreadServer() as server:
        answer = one(
            spec(
                f"{server.url}/stream/ndjson",
                stream="ndjson",
                delta="text",
                tokens={"input": "usage.in", "output": "usage.out"},
            )
        )
        (seen,) = server.seen()
    assert answer.text == ECHO
    assert answer.usage == Usage(input=len(ASKED), output=len(ECHO))
    assert answer.first is not None
    assert seen.headers["accept"].startswith("application/x-ndjson")


def test_a_plain_text_stream_is_the_answer_itself() -> None:
    with ThreadServer() as server:
        answer = one(spec(f"{server.url}/stream/text", stream="text"))
    assert answer.text == ECHO
    assert answer.usage is None
    assert answer.first is not None


def test_the_dialogue_goes_on_after_a_streamed_answer() -> None:
    with ThreadServer() as server:
        agent = spec(
            f"{server.url}/stream/vercel",
            stream="sse",
            delta="delta",
            event="text-delta",
            body={"messages": "$messages"},
        )
        talk(agent, ["Hi", "Bye"])
        second = server.seen()[1]
    assert second.body["messages"] == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "echo: Hi"},
        {"role": "user", "content": "Bye"},
    ]


# Time to first token


@pytest.mark.parametrize(
    ("path", "fields"),
    [
        ("/stream/vercel-named", {"stream": "sse", "delta": "delta", "event": "text-delta"}),
        ("/stream/ndjson", {"stream": "ndjson", "delta": "text"}),
        ("/stream/text", {"stream": "text"}),
    ],
)
def test_the_time_to_the_first_piece_of_text_counts_from_sending(path: str, fields: dict[str, Any]) -> None:
    """The agent waits 0.4 s before its answer starts and 0.05 s before each piece: the first
    piece of text cannot have come sooner than 0.45 s after the turn was sent."""
    with ThreadServer() as server:
        agent = spec(f"{server.url}{path}?wait=0.4&gap=0.05", **fields)
        started = time.monotonic()
        answer = one(agent)
        took = time.monotonic() - started
    assert answer.text == ECHO
    assert answer.first is not None
    assert answer.first >= 0.45
    assert answer.first <= took


def test_an_answer_read_whole_has_no_time_to_first_token() -> None:
    with ThreadServer() as server:
        agent = msgspec.convert(
            {
                "url": f"{server.url}/chat",
                "body": {"message": "$message", "conversation_id": ""},
                "answer": "answer",
            },
            AgentSpec,
        )
        answer = one(agent)
    assert answer.text == f"{ECHO} (turn 1)"
    assert answer.first is None


# Broken and empty streams


BROKEN = {"sse": {"delta": "delta"}, "ndjson": {"delta": "text"}, "text": {}}


@pytest.mark.parametrize("kind", ["sse", "ndjson", "text"])
def test_a_stream_that_breaks_fails_the_turn_and_is_never_sent_again(kind: str) -> None:
    with ThreadServer() as server:
        with pytest.raises(AgentFailure) as caught:
            talk(spec(f"{server.url}/stream/broken?kind={kind}", stream=kind, **BROKEN[kind]), ["Hi"])
        requests = server.seen()
    assert caught.value.reason == "stream_broken"
    assert "broke" in caught.value.detail
    assert len(requests) == 1, "the agent may have acted: the turn is not sent again"


@pytest.mark.parametrize("kind", ["sse", "ndjson", "text"])
def test_a_stream_that_says_nothing_is_an_empty_answer(kind: str) -> None:
    with ThreadServer() as server, pytest.raises(AgentFailure) as caught:
        talk(spec(f"{server.url}/stream/empty?kind={kind}", stream=kind, **BROKEN[kind]), ["Hi"])
    assert caught.value.reason == "empty_answer"


# Through the command


SCENARIO = """\
name: order
turns:
  - Where is order 4411?
  - Thanks.
checks:
  - contains: "echo: Where is order 4411?"
  - contains: "echo: Thanks."
    in: last
"""


def project(folder: Path, agent: str) -> Path:
    (folder / "agents").mkdir(parents=True)
    (folder / "scenarios").mkdir()
    (folder / "agents" / "streamed.yaml").write_text(agent)
    (folder / "scenarios" / "order.yaml").write_text(SCENARIO)
    return folder


def test_a_run_records_the_time_to_first_token_of_each_streamed_turn(tmp_path: Path) -> None:
    agent = (
        "url: ${AGENT_URL}/stream/vercel-named?wait=0.2\nbody: {messages: $messages}\nstream: sse\n"
        "delta: delta\nevent: text-delta\n"
        "tokens: {input: messageMetadata.usage.inputTokens, output: messageMetadata.usage.outputTokens}\n"
    )
    folder = project(tmp_path / "project", agent)
    with ThreadServer() as server:
        done = convy(
            "run", "--project", str(folder), "--repeat", "2", cwd=tmp_path, env={"AGENT_URL": server.url}
        )
    assert done.returncode == 0, done.stdout + done.stderr
    attempts = lines(only_run(folder / "results"))
    assert len(attempts) == 2
    for attempt in attempts:
        assert attempt["decision"]["holds"] is True, attempt["decision"]  # type: ignore[index]
        turns: list[dict[str, Any]] = attempt["turns"]  # type: ignore[assignment]
        assert [turn["agent"] for turn in turns] == ["echo: Where is order 4411?", "echo: Thanks."]
        for turn in turns:
            assert isinstance(turn["first"], float) and 0.2 <= turn["first"] <= turn["seconds"]
        assert turns[1]["usage"] == {"input": len("Thanks."), "output": len("echo: Thanks.")}


def test_a_run_fails_the_attempt_whose_stream_broke(tmp_path: Path) -> None:
    agent = "url: ${AGENT_URL}/stream/broken?kind=sse\nbody: {message: $message}\nstream: sse\ndelta: delta\n"
    folder = project(tmp_path / "project", agent)
    with ThreadServer() as server:
        done = convy(
            "run", "--project", str(folder), "--repeat", "1", cwd=tmp_path, env={"AGENT_URL": server.url}
        )
        sent = len(server.seen())
    assert done.returncode == 1, done.stdout + done.stderr
    (attempt,) = lines(only_run(folder / "results"))
    decision: dict[str, Any] = attempt["decision"]  # type: ignore[assignment]
    assert decision["type"] == "failed" and decision["reason"] == "stream_broken"
    assert sent == 1
