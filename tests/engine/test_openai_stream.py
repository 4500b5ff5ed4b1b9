"""The openai-chat protocol streamed (`stream: sse`) against the real LiteLLM proxy
(tests/servers/litellm_proxy.py): the answer assembled from the chunks it streams, the usage from
the chunk that carries it (only sent when `stream_options.include_usage` was asked for), `model`
sent (LiteLLM refuses a body without it, and its words are shown), tool-call pieces assembled into
steps, a stream the proxy breaks, and the time to the first piece of text (docs/agents.md)."""

from __future__ import annotations

import msgspec
import pytest

from convy.play.agent import AgentFailure, Call, Usage
from convy.play.wire.chat import OpenAiChat
from convy.play.wire.dialect import Ask
from convy.play.wire.spec import AgentSpec
from tests.servers.litellm_proxy import MOCK, LiteLLMProxy
from tests.support.talk import talk, timed


def chat(proxy: LiteLLMProxy, **fields: object) -> AgentSpec:
    return msgspec.convert(
        {"url": f"{proxy.url}/v1/chat/completions", "headers": proxy.headers, **fields}, AgentSpec
    )


def said(text: str, users: int) -> str:
    """What the scripted provider answers to `text` as the latest of `users` user messages."""
    return f"You said: {text} ({users} user messages)"


def test_the_request_asks_for_a_stream_with_its_usage_and_names_the_model() -> None:
    spec = msgspec.convert({"url": "http://agent.test/v1", "model": "mock", "stream": "sse"}, AgentSpec)
    body = OpenAiChat(spec, "agent").body(Ask(dialogue=(), message="hi", conversation="c1"))
    assert body == {
        "messages": [],
        "model": "mock",
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    whole = msgspec.structs.replace(spec, stream="none")
    assert OpenAiChat(whole, "agent").body(Ask(dialogue=(), message="hi", conversation="c1")) == {
        "messages": [],
        "model": "mock",
    }


def test_litellm_mock_answer_is_assembled_from_its_streamed_chunks(litellm_proxy: LiteLLMProxy) -> None:
    first, second = talk(chat(litellm_proxy, model="mock", stream="sse"), ["Where is my order?", "Thanks"])
    assert first.text == MOCK
    assert second.text == MOCK
    # LiteLLM counts the tokens itself; it sends them only because include_usage was asked for
    assert first.usage is not None
    assert (first.usage.input or 0) > 0
    assert (first.usage.output or 0) > 0


def test_the_dialogue_is_sent_and_the_usage_read_from_the_chunk_that_has_it(
    litellm_proxy: LiteLLMProxy,
) -> None:
    first, second = talk(
        chat(litellm_proxy, model="scripted", stream="sse"), ["Where is my order?", "Thanks"]
    )
    assert first.text == said("Where is my order?", 1)
    assert second.text == said("Thanks", 2)
    assert first.usage == Usage(input=len("Where is my order?"), output=len(first.text))
    assert second.usage == Usage(input=len("Thanks"), output=len(second.text))
    assert first.steps == ()


def test_without_a_model_litellm_refuses_and_its_words_are_shown(litellm_proxy: LiteLLMProxy) -> None:
    with pytest.raises(AgentFailure) as caught:
        talk(chat(litellm_proxy, stream="sse"), ["hi"])
    assert caught.value.reason == "http_400"
    assert caught.value.status == 400
    assert "Invalid model name passed in model=None" in caught.value.message
    assert "Invalid model name passed in model=None" in caught.value.detail


def test_streamed_tool_call_pieces_become_steps(litellm_proxy: LiteLLMProxy) -> None:
    (answer,) = talk(chat(litellm_proxy, model="scripted-tools", stream="sse"), ["Where is order 4411?"])
    assert answer.text == said("Where is order 4411?", 1)
    assert answer.steps == (Call(name="lookup", arguments='{"order": 4411}'),)
    assert answer.usage == Usage(input=len("Where is order 4411?"), output=len(answer.text))


def test_the_same_tool_call_read_from_a_whole_answer(litellm_proxy: LiteLLMProxy) -> None:
    (answer,) = talk(chat(litellm_proxy, model="scripted-tools"), ["Where is order 4411?"])
    assert answer.text == said("Where is order 4411?", 1)
    assert answer.steps == (Call(name="lookup", arguments='{"order": 4411}'),)
    assert answer.first is None


def test_a_stream_the_proxy_breaks_fails_the_attempt_with_its_message(litellm_proxy: LiteLLMProxy) -> None:
    with pytest.raises(AgentFailure) as caught:
        talk(chat(litellm_proxy, model="scripted-broken", stream="sse"), ["hi"])
    assert caught.value.reason == "stream_broken"
    assert "the scripted model fell over" in caught.value.message
    assert "the scripted model fell over" in caught.value.detail


def test_time_to_first_token_is_recorded_for_streamed_answers_only(litellm_proxy: LiteLLMProxy) -> None:
    streamed = timed(chat(litellm_proxy, model="mock", stream="sse"), ["hi", "and again"])
    for answer, seconds in streamed:
        assert answer.first is not None
        assert 0 <= answer.first <= seconds
    ((whole, _),) = timed(chat(litellm_proxy, model="mock"), ["hi"])
    assert whole.text == MOCK
    assert whole.first is None
