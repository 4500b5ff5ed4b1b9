"""What the template protocol sends, against real servers with the demands of agent frameworks'
own servers (tests/servers/frameworks.py) and the thread server (tests/servers/threads.py):
placeholders inside strings, `$turn` and `$message_id`, the `$messages` shape, form bodies, a
stream filter on a path of the event's data, an unknown session left out, the URL shown filled in
— and agent files refused, with their line, before any request."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import msgspec
import pytest

from convy.play.agent import AgentFailure, Answer
from convy.play.wire.agent import JsonAgent
from convy.play.wire.spec import AgentSpec
from tests.servers.frameworks import FORM, TOOL_TEXT, FrameworkServer
from tests.servers.threads import ThreadServer
from tests.support.command import convy

AG_UI = {
    "threadId": "thread-$conversation",
    "runId": "run-$message_id",
    "messages": {"$messages": {"id": "$message_id", "role": "$role", "content": "$content"}},
    "state": {},
    "tools": [],
    "context": [],
    "forwardedProps": {},
}


def spec(fields: dict[str, Any]) -> AgentSpec:
    return msgspec.convert(fields, AgentSpec)


def talk(agent: AgentSpec, texts: list[str], key: str = "order/0") -> list[Answer]:
    async def run() -> list[Answer]:
        async with JsonAgent(agent, 5.0).conversation(key) as conversation:
            return [await conversation.reply(text) for text in texts]

    return asyncio.run(run())


def ag_ui(url: str, body: object = AG_UI) -> AgentSpec:
    return spec(
        {
            "url": f"{url}/ag-ui",
            "body": body,
            "stream": "sse",
            "event": "TEXT_MESSAGE_CONTENT",
            "delta": "delta",
        }
    )


# Placeholders inside strings, $turn, $$


def test_placeholders_inside_strings_the_turn_and_a_literal_dollar() -> None:
    body = {
        "message": "$message",
        "turn": "$turn",
        "tag": "t$turn-$conversation",
        "price": "$$5 for $$message",
        "other": "$unknown stays",
    }
    with ThreadServer() as server:
        talk(spec({"url": f"{server.url}/api/ask", "body": body, "answer": "reply.text"}), ["Hi", "Bye"])
        sent = [seen.body for seen in server.seen("/api/ask")]
    assert sent == [
        {
            "message": "Hi",
            "turn": 1,
            "tag": "t1-order/0",
            "price": "$5 for $message",
            "other": "$unknown stays",
        },
        {
            "message": "Bye",
            "turn": 2,
            "tag": "t2-order/0",
            "price": "$5 for $message",
            "other": "$unknown stays",
        },
    ]


# Ids for every message, the same whenever a message is sent again


def test_every_message_has_an_id_of_its_own_kept_when_it_is_sent_again() -> None:
    with FrameworkServer() as server:
        answers = talk(ag_ui(server.url), ["Where is order 4411?", "Thanks", "Bye"])
        runs = server.seen("/ag-ui")
    assert [answer.text for answer in answers][-1] == "echo: Bye (3 user messages)"
    assert [seen.status for seen in runs] == [200, 200, 200]
    histories = [seen.body["messages"] for seen in runs]
    assert [[m["role"] for m in history] for history in histories][-1] == ["user", "assistant"] * 2 + ["user"]
    first, second, third = ([m["id"] for m in history] for history in histories)
    assert second[:1] == first and third[:3] == second, "a message sent again keeps its id"
    assert len(set(third)) == 5 and all(uuid.UUID(id) for id in third)
    assert [seen.body["runId"] for seen in runs] == [f"run-{ids[-1]}" for ids in (first, second, third)]
    assert {seen.body["threadId"] for seen in runs} == {"thread-order/0"}


def test_the_server_refuses_messages_without_ids_or_with_an_id_used_for_another_message() -> None:
    """The server's checks do refuse: the template's ids are what passes them."""
    plain = {**AG_UI, "messages": "$messages"}
    fixed = {**AG_UI, "messages": {"$messages": {"id": "m-1", "role": "$role", "content": "$content"}}}
    with FrameworkServer() as server:
        with pytest.raises(AgentFailure) as without:
            talk(ag_ui(server.url, plain), ["Hi"])
        with pytest.raises(AgentFailure) as repeated:
            talk(ag_ui(server.url, {**fixed, "runId": "run-$conversation-$turn"}), ["Hi", "Bye"], key="c2")
        with pytest.raises(AgentFailure) as rerun:
            talk(ag_ui(server.url, {**AG_UI, "runId": "run-$conversation"}), ["Hi", "Bye"], key="c3")
    assert without.value.reason == "http_422" and "id" in without.value.detail
    assert repeated.value.reason == "http_409" and "m-1" in repeated.value.message
    assert rerun.value.reason == "http_409" and "run-c3" in rerun.value.message


def test_the_messages_shape_with_parts() -> None:
    body = {
        "id": "$conversation",
        "messages": {
            "$messages": {
                "id": "$message_id",
                "role": "$role",
                "parts": [{"type": "text", "text": "$content"}],
            }
        },
    }
    with FrameworkServer() as server:
        agent = spec(
            {
                "url": f"{server.url}/ui/chat",
                "body": body,
                "stream": "sse",
                "event": "text-delta",
                "delta": "delta",
            }
        )
        answers = talk(agent, ["Hi", "Order 4411"])
        (_, second) = server.seen("/ui/chat")
    assert answers[1].text == "echo: Order 4411 (2 user messages)"
    assert second.body["messages"][1]["parts"] == [{"type": "text", "text": "echo: Hi (1 user messages)"}]


# Form bodies


def test_a_form_body_is_sent_as_form_fields() -> None:
    body = {
        "message": "$message",
        "stream": False,
        "session_id": "$session",
        "user_id": "u-$conversation",
        "n": None,
    }
    with FrameworkServer() as server:
        agent = spec(
            {
                "url": f"{server.url}/agents/support/runs",
                "format": "form",
                "body": body,
                "answer": "content",
                "session": {"id": "session_id"},
            }
        )
        answers = talk(agent, ["Where is order 4411?", "Thanks & bye"])
        first, second = server.seen("/agents/support/runs")
    assert [answer.text for answer in answers] == [
        "echo: Where is order 4411? (turn 1)",
        "echo: Thanks & bye (turn 2)",
    ]
    assert first.headers["content-type"] == FORM
    (session,) = server.sessions
    assert parse_qs(first.raw.decode()) == {
        "message": ["Where is order 4411?"],
        "stream": ["false"],
        "user_id": ["u-order/0"],
    }
    assert parse_qs(second.raw.decode())["session_id"] == [session]


def test_a_json_body_is_refused_by_the_form_route() -> None:
    body = {"message": "$message", "stream": False}
    with FrameworkServer() as server, pytest.raises(AgentFailure) as refused:
        talk(spec({"url": f"{server.url}/agents/support/runs", "body": body, "answer": "content"}), ["Hi"])
    assert refused.value.reason == "http_422"


def test_an_empty_session_id_is_refused_by_the_form_route() -> None:
    """What sending `""` for an unknown session did: the server refuses it (agno shared one session)."""
    body = {"message": "$message", "stream": "false", "session_id": ""}
    with FrameworkServer() as server, pytest.raises(AgentFailure) as refused:
        talk(
            spec(
                {
                    "url": f"{server.url}/agents/support/runs",
                    "format": "form",
                    "body": body,
                    "answer": "content",
                }
            ),
            ["Hi"],
        )
    assert refused.value.reason == "http_422"


# A stream filter on a path of the event's data


def test_only_events_with_the_value_at_the_path_carry_the_answer() -> None:
    fields = {
        "body": {"input": {"messages": [{"role": "user", "content": "$message"}]}},
        "stream": "sse",
        "event": "messages",
        "delta": "0.content",
    }
    with FrameworkServer() as server:
        url = f"{server.url}/graph/stream"
        (mixed,) = talk(spec({"url": url, **fields}), ["Where is order 4411?"])
        (kept,) = talk(
            spec({"url": url, **fields, "where": {"0.type": "AIMessageChunk"}}), ["Where is order 4411?"]
        )
    assert TOOL_TEXT in mixed.text, "without the filter the tool's message and the user's echo get in"
    assert kept.text == "echo: Where is order 4411?"


def test_a_filter_on_a_value_that_never_comes_keeps_nothing() -> None:
    fields = {"body": {"input": {"messages": [{"role": "user", "content": "$message"}]}}, "stream": "sse"}
    with FrameworkServer() as server, pytest.raises(AgentFailure) as empty:
        talk(
            spec(
                {
                    "url": f"{server.url}/graph/stream",
                    **fields,
                    "delta": "0.content",
                    "where": {"0.type": "ai"},
                }
            ),
            ["Hi"],
        )
    assert empty.value.reason == "empty_answer"


# The URL shown filled in


def test_an_error_shows_the_url_with_its_placeholders_filled_in() -> None:
    with ThreadServer() as server:
        agent = spec(
            {
                "url": f"{server.url}/threads/$session/runs?key=secret-in-query",
                "body": {"input": {"messages": [{"role": "user", "content": "$message"}]}},
                "answer": "no.such.path",
                "session": {"start": {"url": f"{server.url}/threads", "id": "thread_id"}},
            }
        )
        with pytest.raises(AgentFailure) as failed:
            talk(agent, ["Hi"])
        (thread,) = server.kept
    assert failed.value.reason == "bad_answer"
    assert f"{server.url}/threads/{thread}/runs" in failed.value.detail
    assert "$session" not in failed.value.detail and "secret-in-query" not in failed.value.detail


# Agent files refused before any request, at their line


def refused(tmp_path: Path, agent_file: str) -> str:
    root = tmp_path / "project"
    (root / "scenarios").mkdir(parents=True)
    (root / "agents").mkdir()
    (root / "scenarios" / "s.yaml").write_text("name: s\nturns: [hello]\nchecks: [{contains: echo}]\n")
    (root / "agents" / "bot.yaml").write_text(agent_file)
    done = convy("run", cwd=root, env={"AGENT_URL": "http://127.0.0.1:9"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


def test_a_string_body_is_refused_naming_its_line(tmp_path: Path) -> None:
    said = refused(
        tmp_path, 'url: ${AGENT_URL}/chat\nanswer: reply.text\nbody: \'{"message": "$message"}\'\n'
    )
    assert "agents/bot.yaml:3: `body` is a string: write the body as YAML" in said


def test_a_session_in_the_url_without_a_start_is_refused_naming_its_line(tmp_path: Path) -> None:
    said = refused(
        tmp_path,
        'answer: reply.text\nurl: ${AGENT_URL}/chat/$session\nbody: {m: "$message"}\nsession: {id: sid}\n',
    )
    assert "agents/bot.yaml:2: `url` uses $session, which only session.start gives" in said


def test_a_form_body_that_is_a_list_is_refused(tmp_path: Path) -> None:
    said = refused(tmp_path, 'url: ${AGENT_URL}/chat\nanswer: a\nformat: form\nbody: ["$message"]\n')
    assert "agents/bot.yaml:4: `body` must be a mapping with `format: form`" in said


def test_a_messages_shape_beside_other_keys_is_refused(tmp_path: Path) -> None:
    said = refused(
        tmp_path, 'url: ${AGENT_URL}/chat\nanswer: a\nbody:\n  messages: {"$messages": {r: "$role"}, x: 1}\n'
    )
    assert "agents/bot.yaml:3: `body` has `$messages` as a key beside others" in said


def test_an_unknown_key_names_its_line(tmp_path: Path) -> None:
    said = refused(tmp_path, "url: ${AGENT_URL}/chat\nanswer: a\nwhere: {0.type: x}\nevnt: messages\n")
    assert "agents/bot.yaml:4: unknown key `evnt`" in said


def test_a_session_end_that_needs_a_session_never_known_is_not_requested() -> None:
    with ThreadServer() as server:
        agent = spec(
            {
                "url": f"{server.url}/api/ask",
                "body": {"message": "$message", "conversation_id": "$session"},
                "answer": "reply.text",
                "session": {
                    "id": "conversation_id",
                    "end": {"url": f"{server.url}/threads/$session", "method": "DELETE"},
                },
            }
        )
        answers = talk(agent, ["Hi", "Bye"])
        requests = server.seen()
    assert [answer.text for answer in answers] == ["echo: Hi", "echo: Bye"]
    assert [(seen.method, seen.path) for seen in requests] == [("POST", "/api/ask"), ("POST", "/api/ask")]
    assert all("conversation_id" not in seen.body for seen in requests)


def test_a_session_start_sends_its_body_in_its_own_format() -> None:
    from convy.play.errorbody import Masked
    from convy.play.wire.session import SessionCalls
    from convy.play.wire.spec import SessionSpec

    declared = {
        "start": {
            "url": "http://agent.example/s/$conversation",
            "format": "form",
            "body": {"user": "u-$conversation", "n": 2},
            "id": "id",
        }
    }
    method, url, body = SessionCalls(
        msgspec.convert(declared, SessionSpec), "a/1", "", Masked()
    ).start_request()
    assert (method, url) == ("POST", "http://agent.example/s/a%2F1")
    assert body is not None and body.content_type == FORM
    assert parse_qs(body.content().decode()) == {"user": ["u-a/1"], "n": ["2"]}
