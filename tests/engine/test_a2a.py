"""The A2A dialect (docs/agents.md) against a real agent made of the official a2a-sdk's server classes
(tests/servers/a2a_agent.py): both wire forms — 1.0, and 0.3 through the SDK's compatibility layer —
whole and streamed; Messages, Tasks with chunked artifacts and interim status messages, failed and
rejected tasks, input-required, JSON-RPC errors; the version named by the agent card, or learned
once from a refusal without one; the card's name and version as the build that answered."""

from __future__ import annotations

import asyncio
import socket
import uuid

import httpx
import msgspec
import pytest

from convy.errors import ConfigurationError
from convy.fakes import FakeClock
from convy.play.agent import AgentFailure, Answer
from convy.play.busy import Clock, WallClock
from convy.play.wire.a2a_card import CardRead
from convy.play.wire.agent import JsonAgent
from convy.play.wire.spec import AgentSpec
from tests.servers.a2a_agent import NAME, VERSION, A2aAgent, Seen

BUILD = f"{NAME} {VERSION}"
STREAMS = ("none", "sse")
SENT = {
    "1.0": {"none": "SendMessage", "sse": "SendStreamingMessage"},
    "0.3": {"none": "message/send", "sse": "message/stream"},
}


def spec(url: str, **fields: object) -> AgentSpec:
    return msgspec.convert({"url": url, "protocol": "a2a", **fields}, AgentSpec)


async def played(agent: JsonAgent, texts: list[str], key: str) -> list[Answer]:
    async with agent.conversation(key) as conversation:
        return [await conversation.reply(text) for text in texts]


def talk(agent: AgentSpec, *talks: list[str], clock: Clock | None = None) -> tuple[str, list[list[Answer]]]:
    """The build ready() named, and each conversation's answers (one after the other, one agent)."""

    async def run() -> tuple[str, list[list[Answer]]]:
        json_agent = JsonAgent(agent, 10.0, clock=clock or WallClock())
        build = await json_agent.ready()
        return build, [await played(json_agent, texts, f"c{n}") for n, texts in enumerate(talks)]

    return asyncio.run(run())


def failure(agent: AgentSpec, clock: Clock | None = None) -> AgentFailure:
    with pytest.raises(AgentFailure) as caught:
        talk(agent, ["Hi"], clock=clock)
    return caught.value


def version_of(seen: Seen) -> str:
    return seen.headers.get("a2a-version", "")


# A2A 1.0


@pytest.mark.parametrize("stream", STREAMS)
def test_a_message_agent_in_1_0_carries_the_context_and_never_a_message_id_twice(stream: str) -> None:
    with A2aAgent() as server:
        build, [answers] = talk(spec(f"{server.url}/message", stream=stream), ["Hi", "Where is my order?"])
    assert build == BUILD
    assert [answer.text for answer in answers] == [
        "echo: Hi\nAnything else?",
        "echo: Where is my order?\nAnything else?",
    ]
    first, second = server.seen("/message")
    for seen in (first, second):
        assert seen.method == SENT["1.0"][stream]
        assert version_of(seen) == "1.0"
        assert seen.headers["accept"] == ("text/event-stream" if stream == "sse" else "application/json")
        assert seen.body["jsonrpc"] == "2.0"
        assert seen.message["role"] == "ROLE_USER"
        assert "kind" not in seen.message
        assert "taskId" not in seen.message
        uuid.UUID(seen.message["messageId"])
    assert first.message["parts"] == [{"text": "Hi"}]
    assert "contextId" not in first.message
    assert second.message["contextId"] == server.heard[0].context
    assert [heard.context for heard in server.heard] == [server.heard[0].context] * 2
    assert first.message["messageId"] != second.message["messageId"]
    assert first.body["id"] != second.body["id"]
    if stream == "sse":
        assert all(answer.first is not None for answer in answers)


@pytest.mark.parametrize("stream", STREAMS)
def test_a_task_says_its_artifact_chunks_joined_never_its_history_or_working_messages(stream: str) -> None:
    with A2aAgent() as server:
        _, [answers] = talk(spec(f"{server.url}/task", stream=stream), ["Hi", "Size 42"])
    assert [answer.text for answer in answers] == ["You said: Hi", "You said: Size 42"]
    first, second = server.seen("/task")
    assert "contextId" not in first.message
    assert second.message["contextId"] == server.heard[0].context
    assert "taskId" not in second.message
    assert server.heard[0].task != server.heard[1].task
    if stream == "sse":
        assert answers[0].first is not None


@pytest.mark.parametrize("stream", STREAMS)
def test_a_task_left_working_is_asked_after_until_the_turn_timeout_and_names_its_state(stream: str) -> None:
    clock = FakeClock()
    with A2aAgent() as server:
        failed = failure(spec(f"{server.url}/quiet", stream=stream), clock=clock)
    assert failed.reason == "timeout"
    assert failed.detail == f'the task at {server.url}/quiet stayed "working" for 10 s'
    assert "Looking into" not in failed.detail
    assert clock.slept[:4] == [0.25, 0.375, 0.5625, 0.84375]
    assert max(clock.slept) == 2.0
    assert sum(clock.slept) == pytest.approx(10.0)
    sent, *polls = server.seen("/quiet")
    assert sent.method == SENT["1.0"][stream]
    assert len(polls) == len(clock.slept)
    assert {seen.method for seen in polls} == {"GetTask"}
    assert {seen.body["params"]["id"] for seen in polls} == {server.heard[0].task}
    assert all(version_of(seen) == "1.0" and seen.headers["accept"] == "application/json" for seen in polls)
    assert len({seen.body["id"] for seen in server.seen("/quiet")}) == len(polls) + 1


@pytest.mark.parametrize(("card", "asked"), [("both", "GetTask"), ("0.3", "tasks/get")])
def test_a_task_answered_at_once_is_asked_after_until_it_is_done(card: str, asked: str) -> None:
    with A2aAgent(card=card, at_once=True) as server:  # type: ignore[arg-type]
        _, [answers] = talk(spec(f"{server.url}/later"), ["Hi", "Size 42"])
    assert [answer.text for answer in answers] == ["Later: Hi", "Later: Size 42"]
    sent = server.seen("/later")
    first_polls = [seen for seen in sent if seen.method == asked][:2]
    assert [seen.body["params"]["id"] for seen in first_polls] == [server.heard[0].task] * 2
    assert [seen.method for seen in sent].count(asked) >= 4
    second = next(seen for seen in sent[1:] if seen.method != asked)
    assert second.message["contextId"] == server.heard[0].context
    assert "taskId" not in second.message


def test_the_card_names_the_build_and_1_0_wins_over_the_legacy_version() -> None:
    with A2aAgent(card="both") as server:
        card = httpx.get(f"{server.url}/.well-known/agent-card.json").json()
        build, [[answer]] = talk(spec(f"{server.url}/message", headers={"X-Team": "care"}), ["Hi"])
    assert card["protocolVersion"] == "0.3"
    assert [interface["protocolVersion"] for interface in card["supportedInterfaces"]] == ["1.0", "0.3"]
    assert build == BUILD
    assert answer.text == "echo: Hi\nAnything else?"
    asked = [seen for seen in server.requests if seen.path == "/.well-known/agent-card.json"]
    assert len(asked) == 2
    assert asked[1].headers["x-team"] == "care"
    assert [seen.method for seen in server.seen("/message")] == ["SendMessage"]


@pytest.mark.parametrize("stream", STREAMS)
@pytest.mark.parametrize(
    ("path", "reason", "said"),
    [("/fail", "a2a_task_failed", "No stock for Hi"), ("/reject", "a2a_task_rejected", "I only sell shoes")],
)
def test_a_task_that_fails_or_is_rejected_fails_with_its_status_text(
    stream: str, path: str, reason: str, said: str
) -> None:
    with A2aAgent() as server:
        failed = failure(spec(f"{server.url}{path}", stream=stream))
    assert failed.reason == reason
    assert failed.message == said
    assert said in failed.detail
    assert "Looking into" not in failed.detail


@pytest.mark.parametrize("stream", STREAMS)
def test_input_required_is_an_ordinary_answer(stream: str) -> None:
    with A2aAgent() as server:
        _, [[first, second]] = talk(spec(f"{server.url}/ask", stream=stream), ["Hi", "The blue ones"])
    assert first.text == "Which order, Hi?"
    assert second.text == "Which order, The blue ones?"
    assert server.seen("/ask")[1].message["contextId"] == server.heard[0].context


@pytest.mark.parametrize("stream", STREAMS)
def test_a_json_rpc_error_fails_the_attempt_quoting_its_code_and_message(stream: str) -> None:
    with A2aAgent() as server:
        failed = failure(spec(f"{server.url}/refuse", stream=stream))
    assert failed.reason == "a2a_error"
    assert "-32004" in failed.detail
    assert "refunds are not supported" in failed.detail
    assert "-32004" in failed.message
    assert "refunds are not supported" in failed.message


@pytest.mark.parametrize("stream", STREAMS)
def test_an_agent_that_breaks_mid_task_fails_the_attempt_with_its_error(stream: str) -> None:
    with A2aAgent() as server:
        failed = failure(spec(f"{server.url}/break", stream=stream))
    assert failed.reason == "a2a_error"
    assert "-32603" in failed.detail
    assert "the shop went down" in failed.message
    assert len(server.heard) == 1


# A2A 0.3


@pytest.mark.parametrize("stream", STREAMS)
@pytest.mark.parametrize(
    ("path", "said"),
    [("/message", "echo: {}\nAnything else?"), ("/task", "You said: {}"), ("/ask", "Which order, {}?")],
)
def test_a_card_of_0_3_is_spoken_0_3(stream: str, path: str, said: str) -> None:
    with A2aAgent(card="0.3") as server:
        build, [answers] = talk(spec(f"{server.url}{path}", stream=stream), ["Hi", "Size 42"])
    assert build == BUILD
    assert [answer.text for answer in answers] == [said.format("Hi"), said.format("Size 42")]
    first, second = server.seen(path)
    for seen in (first, second):
        assert seen.method == SENT["0.3"][stream]
        assert version_of(seen) == ""
        assert seen.message["kind"] == "message"
        assert seen.message["role"] == "user"
        assert "taskId" not in seen.message
        uuid.UUID(seen.message["messageId"])
    assert first.message["parts"] == [{"kind": "text", "text": "Hi"}]
    assert "contextId" not in first.message
    assert second.message["contextId"] == server.heard[0].context
    assert first.message["messageId"] != second.message["messageId"]


@pytest.mark.parametrize("stream", STREAMS)
def test_a_task_that_fails_in_0_3_fails_with_its_status_text(stream: str) -> None:
    with A2aAgent(card="0.3") as server:
        failed = failure(spec(f"{server.url}/fail", stream=stream))
    assert failed.reason == "a2a_task_failed"
    assert failed.message == "No stock for Hi"
    assert [seen.method for seen in server.seen("/fail")] == [SENT["0.3"][stream]]


# Without a card: 1.0 first, 0.3 learned once


@pytest.mark.parametrize("stream", STREAMS)
def test_without_a_card_1_0_is_tried_and_kept_when_it_answers(stream: str) -> None:
    with A2aAgent(card="none", legacy=False) as server:
        build, [answers] = talk(spec(f"{server.url}/task", stream=stream), ["Hi", "Size 42"])
    assert build == ""
    assert [answer.text for answer in answers] == ["You said: Hi", "You said: Size 42"]
    assert [seen.method for seen in server.seen("/task")] == [SENT["1.0"][stream]] * 2
    assert all(version_of(seen) == "1.0" for seen in server.seen("/task"))


@pytest.mark.parametrize("stream", STREAMS)
def test_a_server_of_0_3_refuses_1_0_once_and_the_run_speaks_0_3_from_then_on(stream: str) -> None:
    with A2aAgent(card="none", modern=False) as server:
        build, answers = talk(spec(f"{server.url}/task", stream=stream), ["Hi", "Size 42"], ["Red"])
    assert build == ""
    assert [[answer.text for answer in talked] for talked in answers] == [
        ["You said: Hi", "You said: Size 42"],
        ["You said: Red"],
    ]
    sent = [seen.method for seen in server.seen("/task")]
    assert sent == [SENT["1.0"][stream]] + [SENT["0.3"][stream]] * 3
    assert [version_of(seen) for seen in server.seen("/task")] == ["1.0", "", "", ""]
    assert [heard.text for heard in server.heard] == ["Hi", "Size 42", "Red"]
    refused, resent = server.seen("/task")[:2]
    assert resent.message["parts"] == [{"kind": "text", "text": "Hi"}]
    assert resent.message["messageId"] != refused.message["messageId"]


def test_a_version_not_supported_teaches_0_3_too() -> None:
    with A2aAgent(card="none", strip=True) as server:
        _, [answers] = talk(spec(f"{server.url}/message"), ["Hi", "Size 42"])
    assert [answer.text for answer in answers] == [
        "echo: Hi\nAnything else?",
        "echo: Size 42\nAnything else?",
    ]
    assert [seen.method for seen in server.seen("/message")] == [
        "SendMessage",
        "message/send",
        "message/send",
    ]
    assert server.seen("/message")[2].message["contextId"] == server.heard[0].context


def test_conversations_refused_together_are_each_sent_again_once() -> None:
    together = 6

    async def run(agent: JsonAgent) -> list[list[Answer]]:
        await agent.ready()
        return await asyncio.gather(
            *(played(agent, [f"Hi {n}", f"Size {n}"], f"c{n}") for n in range(together))
        )

    with A2aAgent(card="none", modern=False, gather=together) as server:
        answers = asyncio.run(run(JsonAgent(spec(f"{server.url}/task"), 30.0)))
    assert [[answer.text for answer in talked] for talked in answers] == [
        [f"You said: Hi {n}", f"You said: Size {n}"] for n in range(together)
    ]
    sent = [seen.method for seen in server.seen("/task")]
    assert sent.count("SendMessage") == together
    assert sent.count("message/send") == 2 * together
    assert sorted(heard.text for heard in server.heard) == sorted(
        [f"Hi {n}" for n in range(together)] + [f"Size {n}" for n in range(together)]
    )


def test_a_refusal_of_the_version_a_card_named_fails_the_attempt() -> None:
    with A2aAgent(card="1.0", modern=False) as server:
        failed = failure(spec(f"{server.url}/message"))
    assert failed.reason == "a2a_error"
    assert "-32601" in failed.detail
    assert [seen.method for seen in server.seen("/message")] == ["SendMessage"]


def test_a_turn_refused_in_both_forms_is_sent_again_only_once() -> None:
    with A2aAgent(card="none", modern=False, legacy=False) as server:
        failed = failure(spec(f"{server.url}/message"))
    assert failed.reason == "a2a_error"
    assert "-32601" in failed.detail
    assert [seen.method for seen in server.seen("/message")] == ["SendMessage", "message/send"]
    assert server.heard == []


def test_a_0_3_server_that_answers_1_0_with_http_400_naming_the_method_teaches_0_3_once() -> None:
    with A2aAgent(card="none", bad_request=True) as server:
        _, answers = talk(spec(f"{server.url}/task"), ["Hi", "Size 42"], ["Red"])
    assert [[answer.text for answer in talked] for talked in answers] == [
        ["You said: Hi", "You said: Size 42"],
        ["You said: Red"],
    ]
    assert [seen.method for seen in server.seen("/task")] == ["SendMessage"] + ["message/send"] * 3
    assert [heard.text for heard in server.heard] == ["Hi", "Size 42", "Red"]


def test_an_http_400_after_a_card_named_1_0_fails_the_attempt_with_the_agents_words() -> None:
    with A2aAgent(card="1.0", bad_request=True) as server:
        failed = failure(spec(f"{server.url}/task", stream="sse"))
    assert failed.reason == "http_400"
    assert "SendStreamingMessage" in failed.message
    assert [seen.method for seen in server.seen("/task")] == ["SendStreamingMessage"]


# The agent file's version and card


@pytest.mark.parametrize(
    ("version", "sent"), [("0.3", "message/send"), (0.3, "message/send"), (1.0, "SendMessage")]
)
def test_the_agent_files_version_is_spoken_over_the_cards(version: object, sent: str) -> None:
    with A2aAgent(card="both") as server:
        build, [answers] = talk(spec(f"{server.url}/task", version=version), ["Hi", "Size 42"])
    assert build == BUILD
    assert [answer.text for answer in answers] == ["You said: Hi", "You said: Size 42"]
    assert [seen.method for seen in server.seen("/task")] == [sent, sent]


def test_the_version_0_3_is_spoken_from_the_first_turn_without_a_card() -> None:
    with A2aAgent(card="none", modern=False) as server:
        _, [[answer]] = talk(spec(f"{server.url}/message", version="0.3"), ["Hi"])
    assert answer.text == "echo: Hi\nAnything else?"
    assert [seen.method for seen in server.seen("/message")] == ["message/send"]


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"version": 2}, "version must be 0.3 or 1.0"),
        ({"version": "0.2"}, "version must be 0.3 or 1.0"),
        ({"version": "1.0", "protocol": "openai-chat"}, "version and card belong to the a2a protocol"),
        ({"card": "http://localhost/card.json", "protocol": "template", "answer": "a"}, "belong to the a2a"),
    ],
)
def test_a_version_or_card_that_cannot_be_used_is_refused_with_the_setting_named(
    fields: dict[str, object], said: str
) -> None:
    with pytest.raises(msgspec.ValidationError, match=said):
        msgspec.convert({"url": "http://localhost/a2a", "protocol": "a2a", **fields}, AgentSpec)


@pytest.mark.parametrize(
    "path", ["/task/.well-known/agent-card.json", "/task/.well-known/agent.json", "/.well-known/agent.json"]
)
def test_the_card_is_found_beside_the_agents_path_and_under_its_older_name(path: str) -> None:
    with A2aAgent(card="0.3", card_path=path, modern=False) as server:
        build, [[answer]] = talk(spec(f"{server.url}/task"), ["Hi"])
    assert build == BUILD
    assert answer.text == "You said: Hi"
    assert [seen.method for seen in server.seen("/task")] == ["message/send"]
    looked = [seen.path for seen in server.requests if seen.body is None]
    assert looked[-1] == path
    assert looked == [each for each in CARDS_OF_TASK if each != path][: len(looked) - 1] + [path]


CARDS_OF_TASK = [
    "/task/.well-known/agent-card.json",
    "/task/.well-known/agent.json",
    "/.well-known/agent-card.json",
    "/.well-known/agent.json",
]


def test_a_card_path_walks_up_the_agents_url_to_its_origin() -> None:
    url = "https://agents.example/a2a/agents/support/v1/message:send?key=1"
    urls = [str(each) for each in CardRead(spec(url)).urls]
    assert urls[:2] == [
        "https://agents.example/a2a/agents/support/v1/message:send/.well-known/agent-card.json",
        "https://agents.example/a2a/agents/support/v1/message:send/.well-known/agent.json",
    ]
    assert "https://agents.example/a2a/agents/support/.well-known/agent-card.json" in urls
    assert urls[-2:] == [
        "https://agents.example/.well-known/agent-card.json",
        "https://agents.example/.well-known/agent.json",
    ]
    assert len(urls) == 12


def test_the_card_setting_is_read_alone() -> None:
    with A2aAgent(card="0.3", card_path="/cards/shop.json", modern=False) as server:
        build, [[answer]] = talk(spec(f"{server.url}/task", card=f"{server.url}/cards/shop.json"), ["Hi"])
    assert build == BUILD
    assert answer.text == "You said: Hi"
    assert [seen.path for seen in server.requests if seen.body is None] == ["/cards/shop.json"]


def test_a_card_setting_that_gives_no_card_is_a_configuration_error() -> None:
    with A2aAgent(card="both") as server, pytest.raises(ConfigurationError) as caught:
        talk(spec(f"{server.url}/task", card=f"{server.url}/cards/missing.json?key=secret"), ["Hi"])
    assert caught.value.where == "card"
    assert (
        caught.value.message
        == f"the agent card at {server.url}/cards/missing.json could not be read: HTTP 404"
    )
    assert server.seen("/task") == []


# The card read: the agent's headers and bearer; no card is no failure


def test_the_card_and_the_turns_are_asked_with_the_oauth2_bearer() -> None:
    with A2aAgent(bearer="tok-a2a-1234567890") as server:
        oauth = {"token-url": f"{server.url}/oauth/token", "client-id": "convy", "client-secret": "s3cr3t-42"}
        build, [[answer]] = talk(spec(f"{server.url}/message", auth={"oauth2": oauth}), ["Hi"])
    assert build == BUILD
    assert answer.text == "echo: Hi\nAnything else?"
    *cards, turn = [seen for seen in server.requests if seen.path != "/oauth/token"]
    assert [card.path for card in cards][-1] == "/.well-known/agent-card.json"
    assert {seen.headers["authorization"] for seen in [*cards, turn]} == {"Bearer tok-a2a-1234567890"}


def test_no_card_and_no_agent_is_no_build_and_no_failure_before_the_run() -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()

    async def run() -> str:
        return await JsonAgent(spec(f"http://127.0.0.1:{port}/message"), 5.0).ready()

    assert asyncio.run(run()) == ""
