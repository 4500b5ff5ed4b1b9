"""The openai-responses protocol (docs/agents.md), whole and streamed, against real servers:

* the LiteLLM proxy (tests/servers/litellm_proxy.py): its `mock_response` answer, and its bridge
  from chat completions (plain and streamed, function calls, a stream its model breaks). Without a
  database LiteLLM accepts `previous_response_id` but does not continue the conversation (it looks
  the chain up in its spend logs), so the chain is tested against
* our Responses API server (tests/servers/responses_server.py), its objects built with the `openai`
  package's types: `previous_response_id` carried from the second turn, the conversation continued
  by the server, the text of every output_text part in order, usage, function calls as steps,
  streams with and without SSE event names, failed responses, and the time to the first token."""

from __future__ import annotations

import asyncio

import msgspec
import openai
import pytest

from convy.play.agent import AgentFailure, Call, Usage
from convy.play.wire.agent import JsonAgent
from convy.play.wire.spec import AgentSpec
from tests.servers.litellm_proxy import MOCK, LiteLLMProxy
from tests.servers.responses_server import ARGUMENTS, CRASHED, RATE_LIMITED, ResponsesServer
from tests.support.talk import TIMEOUT, talk, timed

LOOKUP = Call(name="lookup", arguments=ARGUMENTS)


def responses(url: str, **fields: object) -> AgentSpec:
    return msgspec.convert({"url": url, "protocol": "openai-responses", **fields}, AgentSpec)


def failure(agent: AgentSpec, texts: list[str]) -> AgentFailure:
    with pytest.raises(AgentFailure) as caught:
        talk(agent, texts)
    return caught.value


def said(texts: list[str]) -> str:
    """What both servers answer to the latest of `texts` when the conversation is kept."""
    return f"You said: {texts[-1]} ({len(texts)} user messages)"


def used(texts: list[str]) -> Usage:
    """The usage our server reports: the characters of the inputs in, of the answer out."""
    return Usage(input=sum(len(text) for text in texts), output=len(said(texts)))


# LiteLLM


def litellm(proxy: LiteLLMProxy, **fields: object) -> AgentSpec:
    return responses(f"{proxy.url}/v1/responses", headers=proxy.headers, **fields)


def test_litellm_mock_answers_whole(litellm_proxy: LiteLLMProxy) -> None:
    first, second = talk(litellm(litellm_proxy, model="mock"), ["Where is my order?", "Thanks"])
    assert first.text == MOCK
    assert second.text == MOCK
    assert first.usage is not None
    assert (first.usage.input or 0) > 0
    assert (first.usage.output or 0) > 0
    assert first.first is None


def test_litellm_bridge_answers_whole_with_usage_and_function_calls(litellm_proxy: LiteLLMProxy) -> None:
    (answer,) = talk(litellm(litellm_proxy, model="scripted-tools"), ["Where is order 4411?"])
    assert answer.text == said(["Where is order 4411?"])
    assert answer.usage == Usage(input=len("Where is order 4411?"), output=len(answer.text))
    assert answer.steps == (LOOKUP,)


def test_litellm_streams_unnamed_events_read_by_their_type(litellm_proxy: LiteLLMProxy) -> None:
    agent = litellm(litellm_proxy, model="scripted-tools", stream="sse")
    ((first, seconds), (second, _)) = timed(agent, ["Where is order 4411?", "Thanks"])
    assert first.text == said(["Where is order 4411?"])
    assert first.usage == Usage(input=len("Where is order 4411?"), output=len(first.text))
    assert first.steps == (LOOKUP,)
    assert first.first is not None
    assert 0 <= first.first <= seconds
    # the second turn went with the first's id, which LiteLLM accepts (without a database it
    # cannot look the conversation up, so its model hears only the latest message)
    assert second.text.startswith("You said: Thanks (")


def test_a_stream_litellm_fails_midway_breaks_the_attempt(litellm_proxy: LiteLLMProxy) -> None:
    failed = failure(litellm(litellm_proxy, model="scripted-broken", stream="sse"), ["hi"])
    assert failed.reason == "stream_broken"
    assert "the scripted model fell over" in failed.message
    assert "the scripted model fell over" in failed.detail


def test_without_a_model_litellm_refuses_and_its_words_are_shown(litellm_proxy: LiteLLMProxy) -> None:
    failed = failure(litellm(litellm_proxy), ["hi"])
    assert failed.reason == "http_400"
    assert "Invalid model name passed in model=None" in failed.message


# Our Responses API server


def test_the_previous_answer_id_is_carried_from_the_second_turn() -> None:
    texts = ["Where is my order?", "It is 4411", "Thanks"]
    with ResponsesServer() as server:
        answers = talk(responses(f"{server.url}/v1/responses", model="echo"), texts)
        bodies = server.bodies()
        ids = list(server.kept)
    assert [answer.text for answer in answers] == [said(texts[: n + 1]) for n in range(3)]
    assert [answer.usage for answer in answers] == [used(texts[: n + 1]) for n in range(3)]
    assert bodies == [
        {"model": "echo", "input": "Where is my order?", "store": True},
        {"model": "echo", "input": "It is 4411", "store": True, "previous_response_id": ids[0]},
        {"model": "echo", "input": "Thanks", "store": True, "previous_response_id": ids[1]},
    ]
    assert all(answer.first is None for answer in answers)


def test_each_conversation_carries_its_own_ids() -> None:
    with ResponsesServer() as server:
        agent = responses(f"{server.url}/v1/responses", model="echo")
        talk(agent, ["one", "two"])
        (fresh,) = talk(agent, ["three"])
        bodies = server.bodies()
    assert fresh.text == said(["three"])
    assert "previous_response_id" not in bodies[2]


def test_the_text_is_every_output_text_part_of_every_message_in_order() -> None:
    with ResponsesServer() as server:
        (answer,) = talk(responses(f"{server.url}/v1/responses", model="parts"), ["Where is my order?"])
    # the reasoning item and the refusal part are not part of the text
    assert answer.text == said(["Where is my order?"])


def test_function_calls_become_steps() -> None:
    with ResponsesServer() as server:
        (answer,) = talk(responses(f"{server.url}/v1/responses", model="tools"), ["Where is order 4411?"])
    assert answer.steps == (LOOKUP,)
    assert answer.text == said(["Where is order 4411?"])


@pytest.mark.parametrize("path", ["/v1/responses", "/unnamed/v1/responses"])
def test_streamed_deltas_make_the_answer_and_the_completed_event_its_id_and_usage(path: str) -> None:
    texts = ["Where is order 4411?", "Thanks"]
    with ResponsesServer() as server:
        turns = timed(responses(f"{server.url}{path}", model="tools", stream="sse"), texts)
        bodies = server.bodies()
        ids = list(server.kept)
    (first, seconds), (second, _) = turns
    assert first.text == said(texts[:1])
    assert second.text == said(texts)
    assert first.usage == used(texts[:1])
    assert second.usage == used(texts)
    assert first.steps == second.steps == (LOOKUP,)
    assert bodies[0] == {"model": "tools", "input": texts[0], "store": True, "stream": True}
    assert bodies[1]["previous_response_id"] == ids[0]
    for answer, took in turns:
        assert answer.first is not None
        assert 0 <= answer.first <= took


def test_streamed_parts_are_joined_in_order() -> None:
    with ResponsesServer() as server:
        (answer,) = talk(responses(f"{server.url}/v1/responses", model="parts", stream="sse"), ["hi"])
    assert answer.text == said(["hi"])


def test_a_stream_without_deltas_is_read_from_its_completed_response() -> None:
    with ResponsesServer() as server:
        first, second = talk(responses(f"{server.url}/v1/responses", model="quiet", stream="sse"), ["a", "b"])
        ids = list(server.kept)
        bodies = server.bodies()
    assert first.text == said(["a"])
    assert second.text == said(["a", "b"])
    assert first.usage == used(["a"])
    assert first.first is not None
    assert bodies[1]["previous_response_id"] == ids[0]


def test_a_failed_response_fails_the_attempt_with_its_message() -> None:
    with ResponsesServer() as server:
        failed = failure(responses(f"{server.url}/v1/responses", model="fails"), ["hi"])
    assert failed.reason == "response_failed"
    assert failed.message == CRASHED
    assert CRASHED in failed.detail


@pytest.mark.parametrize(("model", "message"), [("fails", CRASHED), ("errors", RATE_LIMITED)])
def test_a_failed_or_error_event_breaks_the_stream(model: str, message: str) -> None:
    with ResponsesServer() as server:
        failed = failure(responses(f"{server.url}/unnamed/v1/responses", model=model, stream="sse"), ["hi"])
    assert failed.reason == "stream_broken"
    assert failed.message == message
    assert message in failed.detail


def test_a_server_that_lost_the_conversation_refuses_the_next_turn_in_its_words() -> None:
    with ResponsesServer() as server:

        async def run() -> None:
            agent = responses(f"{server.url}/v1/responses", model="echo")
            async with JsonAgent(agent, TIMEOUT).conversation("c1") as conversation:
                await conversation.reply("hi")
                server.kept.clear()
                await conversation.reply("again")

        with pytest.raises(AgentFailure) as caught:
            asyncio.run(run())
    assert caught.value.reason == "http_400"
    assert "Previous response with id 'resp_" in caught.value.message
    assert "not found" in caught.value.message


def test_without_a_model_the_server_refuses_in_its_words() -> None:
    with ResponsesServer() as server:
        failed = failure(responses(f"{server.url}/v1/responses"), ["hi"])
    assert failed.reason == "http_400"
    assert failed.message == "Missing required parameter: 'model'."


def test_the_official_client_reads_our_server_as_we_do() -> None:
    """Our server speaks the Responses API as the `openai` package reads it, and the package's own
    `output_text` is the text we read."""
    with ResponsesServer() as server:
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="sk-unused", max_retries=0)
        with client:
            whole = client.responses.create(model="parts", input="hi")
            kinds = [event.type for event in client.responses.create(model="tools", input="hi", stream=True)]
            followed = client.responses.create(model="echo", input="again", previous_response_id=whole.id)
        (ours,) = talk(responses(f"{server.url}/v1/responses", model="parts"), ["hi"])
    assert whole.output_text == ours.text == said(["hi"])
    assert followed.output_text == said(["hi", "again"])
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert {"response.output_text.delta", "response.function_call_arguments.delta"} <= set(kinds)
