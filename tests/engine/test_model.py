"""OpenAiModel against a real local OpenAI-compatible server; Contained and PatientModel."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import httpx
import pytest

from convy.play.agent import Message, Usage
from convy.play.busy import Busy, Patience, Places
from convy.play.model import Contained, Model, ModelFailure, Models, OpenAiModel, PatientModel, Reply
from convy.play.rate import Pace
from tests.servers.models import Canned, ModelServer, Request

T = TypeVar("T")
KEY = "sk-test-SECRET-123"
HELLO = (Message(role="system", content="Be brief."), Message(role="user", content="Hello"))


def with_client(use: Callable[[httpx.AsyncClient], Awaitable[T]], timeout: float = 5.0) -> T:
    async def run() -> T:
        async with httpx.AsyncClient(timeout=timeout) as client:
            return await use(client)

    return asyncio.run(run())


def ask(url: str, key: str = KEY, json: bool = False, timeout: float = 5.0) -> Reply:
    async def use(client: httpx.AsyncClient) -> Reply:
        return await OpenAiModel(url=url, key=key, name="gpt-test", client=client).reply(HELLO, json=json)

    return with_client(use, timeout)


def failure(url: str, key: str = KEY, timeout: float = 5.0) -> str:
    with pytest.raises(ModelFailure) as caught:
        ask(url, key, timeout=timeout)
    text = str(caught.value)
    assert KEY not in text
    return text


def test_a_reply_with_its_usage_and_the_request_as_sent() -> None:
    with ModelServer(lambda request: "Hi there") as server:
        reply = ask(server.url)
    assert reply == Reply(text="Hi there", usage=Usage(input=len("Be brief.") + len("Hello"), output=8))
    assert server.requests == [
        {
            "model": "gpt-test",
            "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}],
        }
    ]
    assert server.paths == ["/v1/chat/completions"]
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"
    assert server.headers[0]["content-type"] == "application/json"


def test_json_asks_for_a_json_object() -> None:
    with ModelServer(lambda request: '{"a": 1}') as server:
        ask(server.url, json=True)
    assert server.requests[0]["response_format"] == {"type": "json_object"}


def test_no_authorization_without_a_key() -> None:
    with ModelServer(lambda request: "ok") as server:
        ask(server.url, key="")
    assert "authorization" not in server.headers[0]


def test_the_query_of_the_url_is_kept() -> None:
    with ModelServer(lambda request: "ok") as server:
        ask(server.url + "/?api-version=2024-10-21")
    assert server.paths == ["/v1/chat/completions?api-version=2024-10-21"]


def test_missing_usage_is_unknown() -> None:
    with ModelServer(lambda request: "ok", usage=False) as server:
        usage = ask(server.url).usage
    assert usage is not None and usage.input is None and usage.output is None, "asked, its tokens unknown"


@pytest.mark.parametrize("status", [429, 503])
def test_refusals_are_busy_with_retry_after(status: int) -> None:
    with (
        ModelServer(lambda request: Canned.busy("2", status=status)) as server,
        pytest.raises(Busy) as caught,
    ):
        ask(server.url)
    assert caught.value.retry_after == 2.0
    assert str(status) in caught.value.detail
    assert server.processed == []


def test_busy_without_retry_after() -> None:
    with ModelServer(lambda request: Canned.busy()) as server, pytest.raises(Busy) as caught:
        ask(server.url)
    assert caught.value.retry_after is None


def test_an_error_status_is_a_failure_naming_the_url_without_its_query() -> None:
    answer = Canned(400, {"error": {"message": f"Bad request for key {KEY}"}})
    with ModelServer(lambda request: answer) as server:
        url = server.url
        text = failure(url + "?token=hidden")
    assert "HTTP 400" in text
    assert f"{url}/chat/completions" in text
    assert "hidden" not in text
    assert "Bad request for key ***" in text


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (Canned(200, b"<html>oops</html>"), "not a chat completion"),
        (Canned(200, {}), "no choices"),
        (Canned(200, {"choices": []}), "no choices"),
        (Canned(200, {"choices": [{"message": {"role": "assistant", "content": None}}]}), "no content"),
        (Canned(200, {"choices": [{"index": 0}]}), "no content"),
        (Canned(200, {"choices": [{"message": {"content": 42}}]}), "not a chat completion"),
        (Canned(200, [1, 2]), "not a chat completion"),
        ("  \n ", "empty reply"),
        (Canned(404, b"not here"), "HTTP 404"),
    ],
)
def test_unusable_answers_are_failures(answer: str | Canned, expected: str) -> None:
    with ModelServer(lambda request: answer) as server:
        assert expected in failure(server.url)


def busy(url: str, timeout: float = 5.0) -> Busy:
    with pytest.raises(Busy) as caught:
        ask(url, timeout=timeout)
    assert KEY not in str(caught.value)
    return caught.value


def test_a_timeout_is_worth_asking_again_and_says_the_seconds() -> None:
    def slow(request: Request) -> str:
        time.sleep(0.5)
        return "late"

    with ModelServer(slow) as server:
        error = busy(server.url, timeout=0.1)
    assert error.kind == "timeout"
    assert "within 0.1 s" in str(error)


def test_a_refused_connection_is_no_busy_service_but_a_model_not_reached() -> None:
    with ModelServer(lambda request: "ok") as server:
        url = server.url
    said = failure(url)
    assert "could not be reached (connection refused)" in said and said.endswith("check model-url")


def test_the_key_is_not_in_its_repr() -> None:
    async def use(client: httpx.AsyncClient) -> str:
        return repr(OpenAiModel(url="https://example.com/v1?x=1", key=KEY, name="m", client=client))

    shown = with_client(use)
    assert KEY not in shown
    assert "x=1" not in shown
    assert "'m'" in shown


class Raising:
    """A model whose reply raises `error`."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    @property
    def name(self) -> str:
        return "raising"

    async def reply(self, messages: tuple[Message, ...], json: bool = False) -> Reply:
        raise self.error


def contained(error: BaseException) -> Reply:
    return asyncio.run(Contained(Raising(error)).reply(HELLO))


def test_contained_turns_any_error_into_a_model_failure() -> None:
    with pytest.raises(ModelFailure, match="KeyError"):
        contained(KeyError("choices"))


def test_contained_lets_busy_and_model_failures_through() -> None:
    with pytest.raises(Busy):
        contained(Busy(1.0))
    with pytest.raises(ModelFailure, match="^empty reply$"):
        contained(ModelFailure("empty reply"))


def test_contained_lets_cancellation_through() -> None:
    with pytest.raises(asyncio.CancelledError):
        contained(asyncio.CancelledError())


def test_contained_keeps_the_name() -> None:
    assert Contained(Raising(ValueError())).name == "raising"


def patient(url: str, patience: float) -> Reply:
    async def use(client: httpx.AsyncClient) -> Reply:
        places = Places(2, Pace(0), Patience(patience, first=0.01, most=0.05))
        model: Model = PatientModel(Contained(OpenAiModel(url=url, key=KEY, name="m", client=client)), places)
        assert model.name == "m"
        return await model.reply(HELLO)

    return with_client(use)


def test_a_refused_request_is_sent_again_and_processed_once() -> None:
    answers: list[str | Canned] = [Canned.busy("0.1"), "second time lucky"]
    with ModelServer(lambda request: answers.pop(0)) as server:
        reply = patient(server.url, patience=5.0)
    assert reply.text == "second time lucky"
    assert len(server.requests) == 2
    assert len(server.processed) == 1


def test_a_model_busy_beyond_patience_is_a_model_failure() -> None:
    with (
        ModelServer(lambda request: Canned.busy("0.05")) as server,
        pytest.raises(ModelFailure, match="gave up after waiting"),
    ):
        patient(server.url, patience=0.2)
    assert 2 <= len(server.requests) <= 6
    assert server.processed == []


def test_a_failure_is_not_sent_again() -> None:
    with (
        ModelServer(lambda request: Canned(401, b"")) as server,
        pytest.raises(ModelFailure, match="HTTP 401"),
    ):
        patient(server.url, patience=5.0)
    assert len(server.requests) == 1


def test_models_hold_the_user_and_the_judge() -> None:
    user, judge = Raising(ValueError()), Raising(KeyError())
    models = Models(user=user, judge=judge)
    assert models.user is user
    assert models.judge is judge
