"""The agent's own sessions (docs/agents.md) against a real ASGI agent with real cookies
(tests/servers/threads.py): a session started (its id from the answer's JSON or a header), `$session`
filled in the turns' url, headers and body, the id read from the first answer instead, the session
ended after the attempt (a failure only a warning), a start that fails failing the attempt — and
every conversation's cookies its own, at once and one after another on a kept connection."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from convy.play.agent import AgentFailure, Answer, SessionNotEnded
from convy.play.wire.agent import JsonAgent
from convy.play.wire.spec import AgentSpec
from tests.servers.threads import COOKIE, Seen, ThreadServer
from tests.support.command import convy, lines, only_run
from tests.support.thread_agents import RUN_BODY, spec, threads


def header_session(url: str) -> AgentSpec:
    return spec(
        {
            "url": f"{url}/sessions/turn",
            "headers": {"X-Session-Id": "$session"},
            "body": {"text": "$message"},
            "answer": "reply.text",
            "session": {"start": {"url": f"{url}/sessions", "id": {"header": "X-Session-Id"}}},
        }
    )


def first_answer(url: str, path: str = "/chat", **fields: object) -> AgentSpec:
    return spec(
        {
            "url": f"{url}{path}",
            "body": {"message": "$message", "conversation_id": "$session"},
            "answer": "answer",
            "session": {"id": "conversation_id"},
            **fields,
        }
    )


def talk(agent: AgentSpec, texts: list[str], key: str = "c1") -> list[Answer]:
    async def run() -> list[Answer]:
        async with JsonAgent(agent, 5.0).conversation(key) as conversation:
            return [await conversation.reply(text) for text in texts]

    return asyncio.run(run())


def owner(seen: Seen) -> str:
    """The id of the conversation (thread, session or chat) a request was about ("" for a start)."""
    body = seen.body if isinstance(seen.body, dict) else {}
    parts = seen.path.split("/")
    thread = parts[2] if len(parts) > 2 and parts[1] == "threads" else ""
    return seen.headers.get("x-session-id") or str(body.get("conversation_id") or "") or thread


# Sessions started with a request of their own


def test_a_thread_is_started_for_the_conversation_used_by_its_turns_and_deleted_after() -> None:
    with ThreadServer() as server:
        answers = talk(threads(server.url), ["Where is order 4411?", "I want a refund."], key="refund/0")
        requests = server.seen()
        (thread,) = server.kept.values()
    assert [answer.text for answer in answers] == [
        "echo: Where is order 4411? (turn 1)",
        "echo: I want a refund. (turn 2)",
    ], "both turns went to the one thread, which kept the dialogue"
    assert [(seen.method, seen.path) for seen in requests] == [
        ("POST", "/threads"),
        ("POST", f"/threads/{thread.id}/runs"),
        ("POST", f"/threads/{thread.id}/runs"),
        ("DELETE", f"/threads/{thread.id}"),
    ]
    assert requests[0].body == {"user": "refund/0"}
    assert requests[0].headers["content-type"] == "application/json"
    assert requests[1].body == {
        "assistant_id": "agent",
        "input": {"messages": [{"role": "user", "content": "Where is order 4411?"}]},
    }
    assert requests[0].cookies == {}
    assert all(seen.cookies == {COOKIE: thread.cookie} for seen in requests[1:]), (
        "the start's cookie went back"
    )
    assert [seen.status for seen in requests] == [200, 200, 200, 204]
    assert thread.deleted


def test_session_placeholders_fill_the_turns_body_and_headers() -> None:
    body = {"input": {"messages": [{"role": "user", "content": "$message"}]}, "thread": "$session"}
    with ThreadServer() as server:
        agent = threads(server.url, body=body, headers={"X-Thread": "thread $session"})
        talk(agent, ["Hi"])
        (thread,) = server.kept.values()
        start, turn = server.seen("/threads")[:2]
    assert "x-thread" not in start.headers, "a header of the session is left out until it is known"
    assert turn.body["thread"] == thread.id
    assert turn.headers["x-thread"] == f"thread {thread.id}"


def test_a_session_id_from_a_response_header_goes_back_in_a_header() -> None:
    with ThreadServer() as server:
        answers = talk(header_session(server.url), ["Hi", "Bye"])
        (session,) = server.kept.values()
        (start,) = server.seen("/sessions")[:1]
        turns = server.seen("/sessions/turn")
    assert "x-session-id" not in start.headers, "a header of the session is left out until it is known"
    assert [answer.text for answer in answers] == ["echo: Hi (turn 1)", "echo: Bye (turn 2)"]
    assert [seen.headers["x-session-id"] for seen in turns] == [session.id, session.id]
    assert all(seen.status == 200 for seen in turns)


def test_a_session_id_issued_in_the_first_answer_is_sent_with_every_later_turn() -> None:
    with ThreadServer() as server:
        answers = talk(first_answer(server.url), ["Hi", "Where is my order?", "Thanks"])
        (chat,) = server.kept.values()
        turns = server.seen("/chat")
    assert [answer.text for answer in answers] == [
        "echo: Hi (turn 1)",
        "echo: Where is my order? (turn 2)",
        "echo: Thanks (turn 3)",
    ]
    # the first turn leaves the unknown id out (never `""`), the later ones send the one it issued
    assert [seen.body.get("conversation_id") for seen in turns] == [None, chat.id, chat.id]


def test_a_session_id_issued_in_a_streamed_first_answer_is_read_from_its_events() -> None:
    with ThreadServer() as server:
        agent = first_answer(server.url, "/chat/stream", stream="sse", delta="delta", event="text-delta")
        answers = talk(agent, ["Hi", "Bye"])
        (chat,) = server.kept.values()
        turns = server.seen("/chat")
    assert [answer.text for answer in answers] == ["echo: Hi (turn 1)", "echo: Bye (turn 2)"]
    assert [seen.body.get("conversation_id") for seen in turns] == [None, chat.id]


def test_the_server_refuses_a_later_turn_without_the_id_or_with_another_conversations_cookie() -> None:
    """The checks the tests rely on do refuse: a later turn without the id, without its cookie, or
    with the cookie of another conversation."""
    with (
        ThreadServer() as server,
        httpx.Client(base_url=server.url) as one,
        httpx.Client(base_url=server.url) as other,
    ):
        first = one.post("/chat", json={"message": "Hi", "conversation_id": ""})
        id = first.json()["conversation_id"]
        other.post("/chat", json={"message": "Hi", "conversation_id": ""})
        without_id = one.post("/chat", json={"message": "Bye", "conversation_id": ""})
        crossed = other.post("/chat", json={"message": "Bye", "conversation_id": id})
        one.cookies.clear()
        without_cookie = one.post("/chat", json={"message": "Bye", "conversation_id": id})
    assert first.status_code == 200
    assert (without_id.status_code, without_id.json()) == (
        400,
        {"detail": "conversation_id is required after the first message"},
    )
    assert crossed.status_code == 403
    assert crossed.json()["detail"] == f"the session cookie belongs to another conversation, not {id}"
    assert without_cookie.status_code == 401


# Starting fails the attempt; ending fails only as a warning


def test_a_start_that_fails_fails_the_attempt_with_the_services_words() -> None:
    with ThreadServer(store_down=True) as server:
        with pytest.raises(AgentFailure) as caught:
            talk(threads(server.url), ["Hi"])
        requests = server.seen()
    assert caught.value.reason == "session_failed"
    assert caught.value.status == 500
    assert caught.value.message == "thread store is down"
    assert "thread store is down" in caught.value.detail
    assert f"{server.url}/threads" in caught.value.detail
    assert [(seen.method, seen.path) for seen in requests] == [("POST", "/threads")], (
        "no turn, nothing to end"
    )


def test_a_start_whose_answer_has_no_id_fails_the_attempt() -> None:
    with ThreadServer() as server:
        agent = spec(
            {
                "url": f"{server.url}/threads/$session/runs",
                "body": RUN_BODY,
                "answer": "messages.-1.content",
                "session": {"start": {"url": f"{server.url}/sessions", "id": "session.id"}},
            }
        )
        with pytest.raises(AgentFailure) as caught:
            talk(agent, ["Hi"])
        turns = server.seen("/threads")
    assert caught.value.reason == "session_failed"
    assert "no id at 'session.id'" in caught.value.detail
    assert turns == []


def test_a_start_without_the_id_header_fails_the_attempt() -> None:
    with ThreadServer() as server:
        agent = spec(
            {
                "url": f"{server.url}/sessions/turn",
                "body": {"text": "$message"},
                "answer": "reply.text",
                "session": {"start": {"url": f"{server.url}/threads", "id": {"header": "X-Session-Id"}}},
            }
        )
        with pytest.raises(AgentFailure) as caught:
            talk(agent, ["Hi"])
    assert caught.value.reason == "session_failed"
    assert "without a X-Session-Id header" in caught.value.detail


def test_an_end_that_fails_is_a_warning_after_every_turn_was_answered() -> None:
    answers: list[Answer] = []

    async def run(agent: JsonAgent) -> None:
        async with agent.conversation("c1") as conversation:
            answers.extend([await conversation.reply("Hi"), await conversation.reply("Bye")])

    with ThreadServer(delete_fails=True) as server:
        with pytest.raises(SessionNotEnded) as caught:
            asyncio.run(run(JsonAgent(threads(server.url), 5.0)))
        deleting = server.seen()[-1]
    assert [answer.text for answer in answers] == ["echo: Hi (turn 1)", "echo: Bye (turn 2)"]
    assert deleting.method == "DELETE" and deleting.status == 500
    assert "HTTP 500" in str(caught.value)
    assert "the thread could not be deleted: the store is read-only" in str(caught.value)


def test_a_failed_attempt_still_ends_its_session_and_its_failure_wins_over_the_end() -> None:
    with ThreadServer(delete_fails=True) as server:
        with pytest.raises(AgentFailure) as caught:
            talk(threads(server.url, answer="output.text"), ["Hi"])
        requests = server.seen()
    assert caught.value.reason == "bad_answer"
    assert [seen.method for seen in requests] == ["POST", "POST", "DELETE"]


def test_without_an_end_nothing_is_requested_after_the_turns() -> None:
    with ThreadServer() as server:
        talk(threads(server.url, end=False), ["Hi"])
        requests = server.seen()
    assert [seen.method for seen in requests] == ["POST", "POST"]


# Cookies: each conversation its own, whether at once or one after another on a kept connection


def converse_at_once(agent: JsonAgent, rounds: int, at_once: int, turns: int = 3) -> list[str]:
    """`rounds` rounds of `at_once` conversations at the same time, in one run's scope (kept
    connections handed on); every answer, checked to be its own conversation's."""
    answers: list[str] = []

    async def converse(key: str) -> None:
        async with agent.conversation(key) as conversation:
            for n in range(1, turns + 1):
                answer = await conversation.reply(f"{key} says {n}")
                answers.append(answer.text)
                assert answer.text == f"echo: {key} says {n} (turn {n})"
                await asyncio.sleep(0)

    async def run() -> None:
        async with agent.kept():
            for round in range(rounds):
                async with asyncio.TaskGroup() as group:
                    for n in range(at_once):
                        group.create_task(converse(f"r{round}c{n}"))

    asyncio.run(run())
    return answers


@pytest.mark.parametrize("kind", ["threads", "header", "first-answer"])
def test_cookies_never_cross_between_conversations(kind: str) -> None:
    with ThreadServer() as server:
        agent = {"threads": threads, "header": header_session, "first-answer": first_answer}[kind](server.url)
        answers = converse_at_once(JsonAgent(agent, 5.0), rounds=3, at_once=4)
        requests = server.seen()
        kept = dict(server.kept)
    assert len(answers) == 3 * 4 * 3
    assert len(kept) == 12, "a session for each conversation"
    assert all(seen.status in (200, 201, 204) for seen in requests), [s for s in requests if s.status >= 400]
    for seen in requests:
        id = owner(seen)
        if id:
            assert seen.cookies == {COOKIE: kept[id].cookie}, (
                f"{seen.path} carried another conversation's cookie"
            )
        else:
            assert seen.cookies == {}, f"a conversation began with cookies it was never given: {seen.path}"
    assert len([seen for seen in requests if not owner(seen)]) == 12, "one start for each conversation"


def test_a_kept_connection_handed_to_the_next_conversation_carries_none_of_its_cookies() -> None:
    """One conversation after another on the one kept connection: the second starts with an empty jar,
    so its first turn at the first-answer agent is a new conversation (not refused as a later turn)."""
    with ThreadServer() as server:
        agent = JsonAgent(first_answer(server.url), 5.0)
        converse_at_once(agent, rounds=3, at_once=1, turns=2)
        firsts = [seen for seen in server.seen("/chat") if "conversation_id" not in seen.body]
    assert len(firsts) == 3
    assert all(seen.cookies == {} and seen.status == 200 for seen in firsts)


# Through the command


AGENT_FILE = """\
url: ${AGENT_URL}/threads/$session/runs
body: {"assistant_id": "agent", "input": {"messages": [{"role": "user", "content": "$message"}]}}
answer: messages.-1.content
tokens: {input: messages.-1.usage_metadata.input_tokens, output: messages.-1.usage_metadata.output_tokens}
session:
  start: {url: "${AGENT_URL}/threads", body: {"user": "$conversation"}, id: thread_id}
  end: {url: "${AGENT_URL}/threads/$session", method: DELETE}
"""

SCENARIO = """\
name: refund
turns:
  - Where is order 4411?
  - I want a refund.
checks:
  - contains: "I want a refund. (turn 2)"
    in: last
  - contains: "4411"
"""


def project(folder: Path) -> Path:
    (folder / "agents").mkdir(parents=True)
    (folder / "scenarios").mkdir()
    (folder / "agents" / "threads.yaml").write_text(AGENT_FILE)
    (folder / "scenarios" / "refund.yaml").write_text(SCENARIO)
    return folder


def play(folder: Path, server: ThreadServer) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """A run of four attempts, two at a time, and its attempt lines."""
    done = convy(
        "run",
        "--project",
        str(folder),
        "--repeat",
        "4",
        "--concurrency",
        "2",
        cwd=folder.parent,
        env={"AGENT_URL": server.url},
    )
    return done, lines(only_run(folder / "results"))  # type: ignore[return-value]


def test_a_run_plays_each_attempt_in_a_thread_of_its_own(tmp_path: Path) -> None:
    folder = project(tmp_path / "project")
    with ThreadServer() as server:
        done, attempts = play(folder, server)
        requests = server.seen()
        kept = dict(server.kept)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(attempts) == 4
    assert all(attempt["decision"]["holds"] for attempt in attempts), attempts
    assert all(attempt["warnings"] == [] for attempt in attempts)
    assert len(kept) == 4 and all(thread.deleted for thread in kept.values())
    assert sorted(seen.body["user"] for seen in requests if seen.path == "/threads") == sorted(
        attempt["conversation"] for attempt in attempts
    ), "each attempt's conversation id started its thread"
    for seen in requests:
        if seen.path != "/threads":
            assert seen.cookies == {COOKIE: kept[seen.path.split("/")[2]].cookie}
    assert attempts[0]["turns"][0]["usage"] == {
        "input": len("Where is order 4411?"),
        "output": len("echo: Where is order 4411? (turn 1)"),
    }


def test_a_run_whose_sessions_cannot_be_ended_judges_every_attempt_with_a_warning(tmp_path: Path) -> None:
    folder = project(tmp_path / "project")
    with ThreadServer(delete_fails=True) as server:
        done, attempts = play(folder, server)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(attempts) == 4
    for attempt in attempts:
        assert attempt["decision"]["type"] == "verdict" and attempt["decision"]["holds"] is True
        (warning,) = attempt["warnings"]
        assert "HTTP 500" in warning and "the store is read-only" in warning


def test_a_run_whose_sessions_cannot_start_fails_each_attempt_with_the_services_words(tmp_path: Path) -> None:
    folder = project(tmp_path / "project")
    with ThreadServer(store_down=True) as server:
        done, attempts = play(folder, server)
        turns = server.seen("/threads/")
    assert done.returncode == 1, done.stdout + done.stderr
    assert len(attempts) == 4
    for attempt in attempts:
        decision = attempt["decision"]
        assert decision["type"] == "failed" and decision["reason"] == "session_failed"
        assert decision["message"] == "thread store is down" and decision["status"] == 500
        assert attempt["turns"] == []
    assert turns == []
    assert "thread store is down" in (only_run(folder / "results") / "comment.md").read_text()


def test_a_session_id_is_percent_encoded_in_a_url() -> None:
    from convy.play.errorbody import Masked
    from convy.play.wire.session import SessionCalls
    from convy.play.wire.spec import SessionSpec

    spec = msgspec.convert(
        {"id": "id", "end": {"url": "http://agent.example/threads/$session", "method": "DELETE"}}, SessionSpec
    )
    method, url, body = SessionCalls(spec, "c1", "a/b?c#d", Masked()).end_request()
    assert (method, url, body) == ("DELETE", "http://agent.example/threads/a%2Fb%3Fc%23d", None)
