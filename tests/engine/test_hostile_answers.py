"""Answers no agent should send, from a real local server: JSON nested thousands deep (msgspec and
Python recurse on it) and bodies that are not UTF-8. Each fails the turn as a clear AgentFailure
saying what is wrong, never a RecursionError counted as the agent's crash."""

from __future__ import annotations

import asyncio
import json

import msgspec
import pytest

from convy.demo.localserver import LocalServer
from convy.play.agent import AgentFailure, Answer
from convy.play.wire.agent import JsonAgent
from convy.play.wire.spec import AgentSpec

JSON = {"Content-Type": "application/json"}


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def completion(content: bytes, extra: bytes = b"") -> bytes:
    """An OpenAI chat completion whose message content is the JSON `content`, and more fields."""
    return b'{"choices": [{"message": {"content": ' + content + b"}}]" + extra + b"}"


BODIES = {
    "/deep": nested(10_000),
    "/deep-inside": completion(nested(10_000)),
    "/deep-steps": completion(b'"fine"', b', "trace": [' + nested(10_000) + b"]"),
    "/latin-1": completion('"caf\u00e9"'.encode("latin-1")),
    "/bare-byte": b"\xff\xfe{}",
    "/broken": b'{"choices": [caf\xc3\xa9',
}


def route(method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
    match path:
        case "/stream-deep":
            event = b"data: " + completion(nested(10_000)) + b"\n\n"
            return 200, {"Content-Type": "text/event-stream"}, event
        case "/error-deep":
            return 500, JSON, b'{"error": ' + nested(10_000) + b"}"
        case "/sessions-deep":
            return 200, JSON, b'{"id": ' + nested(10_000) + b"}"
        case "/ok":
            return 200, JSON, completion(b'"hello"')
        case _ if path.startswith("/near/"):
            depth = int(path.removeprefix("/near/"))
            return 200, JSON, completion(b'"fine"', b', "trace": [' + nested(depth) + b"]")
        case _:
            return 200, JSON, BODIES[path]


def spec(url: str, **fields: object) -> AgentSpec:
    return msgspec.convert({"url": url, **fields}, AgentSpec)


def turn(agent: AgentSpec) -> Answer:
    async def run() -> Answer:
        async with JsonAgent(agent, 10.0).conversation("c1") as conversation:
            return await conversation.reply("hi")

    return asyncio.run(run())


def failed(agent: AgentSpec) -> AgentFailure:
    with pytest.raises(AgentFailure) as caught:
        turn(agent)
    return caught.value


@pytest.fixture(scope="module")
def server() -> object:
    with LocalServer(route) as running:
        yield running


@pytest.mark.parametrize("path", ["/deep", "/deep-inside", "/deep-steps"])
def test_an_answer_nested_ten_thousand_deep_is_a_bad_answer(server: LocalServer, path: str) -> None:
    error = failed(spec(f"{server.url}{path}", steps="trace"))
    assert error.reason == "bad_answer"
    assert error.detail == f"the answer from {server.url}{path} is nested too deeply"


def test_a_stream_event_nested_ten_thousand_deep_is_a_bad_answer(server: LocalServer) -> None:
    error = failed(spec(f"{server.url}/stream-deep", stream="sse"))
    assert error.reason == "bad_answer" and "nested too deeply" in error.detail


def test_an_error_body_nested_ten_thousand_deep_is_the_status_alone(server: LocalServer) -> None:
    error = failed(spec(f"{server.url}/error-deep"))
    assert (error.reason, error.status, error.message) == ("http_500", 500, "")


def test_a_session_start_nested_ten_thousand_deep_fails_the_session(server: LocalServer) -> None:
    agent = spec(f"{server.url}/ok", session={"start": {"url": f"{server.url}/sessions-deep", "id": "id.0"}})
    error = failed(agent)
    assert error.reason == "session_failed" and "nested too deeply" in error.detail


@pytest.mark.parametrize("depth", [100, 500, 900, 960, 990, 1_000, 1_100])
def test_steps_nested_near_the_limit_are_read_or_a_bad_answer(server: LocalServer, depth: int) -> None:
    agent = spec(f"{server.url}/near/{depth}", steps="trace")
    try:
        answer = turn(agent)
    except AgentFailure as error:
        assert depth > 500 and error.reason == "bad_answer" and "nested too deeply" in error.detail
        return
    assert answer.text == "fine"
    (step,) = answer.steps
    assert json.loads(getattr(step, "text")) == json.loads(nested(depth))


@pytest.mark.parametrize("path", ["/latin-1", "/bare-byte"])
def test_an_answer_that_is_not_utf_8_says_so(server: LocalServer, path: str) -> None:
    error = failed(spec(f"{server.url}{path}"))
    assert error.reason == "bad_answer"
    assert error.detail == f"the answer from {server.url}{path} is not valid UTF-8"


def test_an_answer_of_utf_8_that_is_not_json_is_still_not_json(server: LocalServer) -> None:
    error = failed(spec(f"{server.url}/broken"))
    assert error.detail == f"the answer from {server.url}/broken is not JSON"
