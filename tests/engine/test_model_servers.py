"""OpenAiModel and the judge against real local servers that answer as third-party model servers
do (OpenAI, vLLM, llama.cpp, LiteLLM): the structured-output chain learned once, max_tokens and
temperature refused by name, the services' own words from every error-body shape, masking of 8+
character secrets only, retries of 5xx/429/timeouts/connections within patience on a controllable
clock, the busy hints, and give-ups that say how long was waited (docs/models.md)."""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import json
import threading
import time
from collections.abc import Callable

import httpx
import pytest

from convy.fakes import FakeAgent, FakeClock
from convy.play.agent import Message, Usage
from convy.play.attempt import Attempt
from convy.play.busy import Busy, Hints
from convy.play.dialog import ChatJudge, Checked, SimulatedUser, VerdictSchema
from convy.play.errorbody import ErrorBody, Masked
from convy.play.model import FORMATS, Model, ModelFailure, OpenAiModel, Reply
from convy.play.outcome import NoVerdict, Verdict
from convy.project.scenario import Claim, Graded, Scenario
from tests.servers.models import (
    LLAMA_CPP_JSON_SCHEMA,
    OPENAI_MAX_TOKENS,
    OPENAI_TEMPERATURE,
    VLLM_OLD_ERROR,
    Canned,
    LikeLlamaCpp,
    ModelServer,
    Request,
    litellm_busy,
)
from tests.support.model_attempt import JUDGED, KEY, PLAIN, model, patient, played, using

SLOW = 30.0
"""How long a slow answer takes: far beyond any timeout a test sets (handler threads are daemons)."""
HELLO = (Message(role="system", content="Be brief."), Message(role="user", content="Hello"))
GRADED = Graded(claim="How clear was the agent?", grades={"clear": True, "vague": False})
CLAIMS: tuple[Claim, ...] = (PLAIN, GRADED)
GOOD = json.dumps(
    {
        "decisions": [
            {"pass": True, "reason": "It asked."},
            {"pass": True, "grade": "clear", "reason": "Clear."},
        ]
    }
)


def judge_twice(server: ModelServer) -> list[Request]:
    """Two judge requests with the same model object (a run's judge): what the server saw."""

    async def use(client: httpx.AsyncClient) -> None:
        judge = ChatJudge(model(client, server.url))
        await judge.decide(CLAIMS, ())
        await judge.decide(CLAIMS, ())

    using(use)
    return server.requests


# --- the structured-output chain -------------------------------------------------------------


def test_llama_cpp_refuses_json_schema_with_a_500_and_gets_the_same_schema_inside_json_object() -> None:
    with ModelServer(LikeLlamaCpp(lambda request: GOOD)) as server:
        requests = judge_twice(server)
    formats = [request["response_format"]["type"] for request in requests]
    assert formats == ["json_schema", "json_object", "json_object"], "learned once, for the run"
    assert requests[1]["response_format"]["schema"] == requests[0]["response_format"]["json_schema"]["schema"]
    assert requests[2]["response_format"] == requests[1]["response_format"]


def test_judge_requests_refused_at_once_for_json_schema_move_one_step_together() -> None:
    at_once = 4
    refused = threading.Barrier(at_once, timeout=60)

    def answer(request: Request) -> str | Canned:
        if request["response_format"]["type"] == "json_schema":
            refused.wait()  # every refusal goes back only once all the requests were sent
            return LLAMA_CPP_JSON_SCHEMA
        return GOOD

    async def use(client: httpx.AsyncClient) -> OpenAiModel:
        shared = model(client, server.url)
        judge = ChatJudge(shared)
        await asyncio.gather(*(judge.decide(CLAIMS, ()) for _ in range(at_once)))
        await judge.decide(CLAIMS, ())
        return shared

    with ModelServer(answer) as server:
        shared = using(use, timeout=90.0)
    formats = [request["response_format"] for request in server.requests]
    assert [format["type"] for format in formats[:at_once]] == ["json_schema"] * at_once
    assert len(formats) == 2 * at_once + 1
    assert all(
        format == {"type": "json_object", "schema": VerdictSchema(CLAIMS).schema().schema}
        for format in formats[at_once:]
    ), "json_object with the schema, not plain json_object"
    assert FORMATS[shared.learned.format] == "json_object_schema"


def test_the_strict_schema_is_one_decision_per_claim_with_each_graded_claim_s_grades_as_an_enum() -> None:
    with ModelServer(lambda request: GOOD) as server:
        judge_twice(server)
    first = server.requests[0]["response_format"]
    assert first["type"] == "json_schema" and first["json_schema"]["strict"] is True
    schema = first["json_schema"]["schema"]
    assert schema["required"] == ["decisions"] and schema["additionalProperties"] is False
    decisions = schema["properties"]["decisions"]
    assert decisions["minItems"] == decisions["maxItems"] == 2
    plain, graded = decisions["items"]["anyOf"]
    assert plain["required"] == ["reason", "pass"] and plain["properties"]["pass"] == {"type": "boolean"}
    assert graded["required"] == ["reason", "grade", "pass"]
    assert graded["properties"]["grade"] == {"type": "string", "enum": ["clear", "vague"]}
    assert all(shape["additionalProperties"] is False for shape in (plain, graded))
    assert len(server.requests) == 2, "a server that takes json_schema is never asked otherwise"


def test_a_scenario_of_plain_claims_has_one_shape_of_decision() -> None:
    schema = VerdictSchema(("One.", "Two.", "Three.")).schema().schema
    decisions = schema["properties"]["decisions"]  # type: ignore[index]
    assert decisions["minItems"] == decisions["maxItems"] == 3  # type: ignore[index]
    assert decisions["items"]["required"] == ["reason", "pass"]  # type: ignore[index]


def test_each_refusal_by_name_moves_one_step_down_to_no_response_format() -> None:
    refusals = {
        "json_schema": VLLM_OLD_ERROR,
        "json_object": Canned(422, {"detail": [{"loc": ["body", "response_format"], "msg": "extra inputs"}]}),
    }

    def answer(request: Request) -> str | Canned:
        format = request.get("response_format")
        if format is None:
            return GOOD
        if format["type"] == "json_object" and "schema" not in format:
            return Canned(400, {"error": {"message": "response_format json_object is not supported"}})
        return refusals[format["type"]]

    with ModelServer(answer) as server:
        requests = judge_twice(server)
    shapes = [request.get("response_format", {"type": "none"}) for request in requests]
    assert [shape["type"] for shape in shapes] == [
        "json_schema",
        "json_object",
        "json_object",
        "none",
        "none",
    ]
    assert "schema" in shapes[1] and "schema" not in shapes[2]


def test_an_error_that_names_no_parameter_is_not_a_step_down() -> None:
    with (
        ModelServer(
            lambda request: Canned(400, {"error": {"message": "Invalid model name passed"}})
        ) as server,
        pytest.raises(ModelFailure) as caught,
    ):
        using(lambda client: model(client, server.url).reply(HELLO, VerdictSchema(CLAIMS).schema()))
    assert len(server.requests) == 1
    assert caught.value.status == 400 and caught.value.message == "Invalid model name passed"


# --- bounded generations, temperature -------------------------------------------------------------


def test_max_tokens_and_temperature_are_sent_and_each_refusal_by_name_is_learned_once() -> None:
    def answer(request: Request) -> str | Canned:
        if "max_tokens" in request:
            return OPENAI_MAX_TOKENS
        if "temperature" in request:
            return OPENAI_TEMPERATURE
        return "ok"

    async def use(client: httpx.AsyncClient) -> None:
        judge = model(client, server.url, max_tokens=1500, temperature=0.0)
        await judge.reply(HELLO)
        await judge.reply(HELLO)

    with ModelServer(answer) as server:
        using(use)
    first, second, third, fourth = server.requests
    assert first["max_tokens"] == 1500 and first["temperature"] == 0.0
    assert (
        second["max_completion_tokens"] == 1500 and "max_tokens" not in second and second["temperature"] == 0
    )
    assert third == fourth and "temperature" not in third and third["max_completion_tokens"] == 1500


def test_the_user_model_sends_its_max_tokens_and_no_temperature() -> None:
    with ModelServer(lambda request: "Hi") as server:
        using(lambda client: model(client, server.url, max_tokens=400).reply(HELLO))
    assert server.requests[0]["max_tokens"] == 400
    assert "temperature" not in server.requests[0]


# --- their words ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            b'{"error": {"message": "Incorrect API key provided", "type": "auth"}}',
            "Incorrect API key provided",
        ),
        (b'{"error": "Invalid model name passed in model=None"}', "Invalid model name passed in model=None"),
        (
            b'{"object": "error", "message": "The model `x` does not exist.", "code": 404}',
            "The model `x` does not exist.",
        ),
        (b'{"detail": "Not Found"}', "Not Found"),
        (
            b'{"detail": [{"loc": ["body", "messages"], "msg": "field required"}]}',
            "body.messages: field required",
        ),
        (b"<html><body>502 Bad Gateway</body></html>", "<html><body>502 Bad Gateway</body></html>"),
        (b'{"error": {"message": "line one\\n   line two"}}', "line one line two"),
        (b"", ""),
    ],
)
def test_the_message_is_read_from_every_shape_of_error_body(body: bytes, said: str) -> None:
    assert ErrorBody(body).message() == said


def test_a_long_message_is_one_line_of_300_characters_with_the_secrets_masked() -> None:
    body = json.dumps({"error": {"message": f"key {KEY} rejected\n" + "x" * 1000}}).encode()
    message = ErrorBody(body, Masked((KEY,))).message()
    assert len(message) == 300 and "\n" not in message
    assert KEY not in message and message.startswith("key *** rejected")


def test_only_secrets_of_8_characters_or_more_are_masked() -> None:
    text = "This model's maximum context length is 2048 tokens, key sk-12345678"
    assert Masked(("x", "sk-1234")).text(text) == text
    assert (
        Masked(("x", "sk-12345678")).text(text)
        == "This model's maximum context length is 2048 tokens, key ***"
    )


def test_a_model_key_of_one_character_does_not_corrupt_the_message() -> None:
    answer = Canned(400, {"error": {"message": "This model's maximum context length is 2048 tokens"}})
    with ModelServer(lambda request: answer) as server, pytest.raises(ModelFailure) as caught:
        using(lambda client: OpenAiModel(url=server.url, key="x", name="m", client=client).reply(HELLO))
    assert caught.value.message == "This model's maximum context length is 2048 tokens"
    assert caught.value.kind == "context"


# --- retries within patience, busy hints, give-ups ----------------------------------------------------


@pytest.mark.parametrize("status", [500, 502, 503, 504, 429])
def test_a_model_error_worth_asking_again_is_retried_and_processed_once(status: int) -> None:
    answers: list[str | Canned] = [Canned(status, {"error": {"message": "try later"}}), "second time lucky"]
    clock = FakeClock()
    with ModelServer(lambda request: answers.pop(0)) as server:
        reply = using(lambda client: patient(model(client, server.url), clock).reply(HELLO))
    assert reply.text == "second time lucky"
    assert len(server.requests) == 2 and len(server.processed) == 1
    assert len(clock.slept) == 1


def test_a_timeout_is_retried_and_a_refused_connection_is_not() -> None:
    calls: list[float] = []

    def slow_once(request: Request) -> str:
        calls.append(0.0)
        if len(calls) == 1:
            time.sleep(SLOW)
        return "done"

    clock = FakeClock()
    with ModelServer(
        slow_once
    ) as server:  # the second answer may take up to a second, however busy the machine
        reply = using(lambda client: patient(model(client, server.url), clock).reply(HELLO), timeout=1.0)
    assert reply.text == "done" and len(calls) == 2

    with ModelServer(lambda request: "unused") as gone:
        url = gone.url
    waited = FakeClock()
    with pytest.raises(ModelFailure) as caught:
        using(lambda client: patient(model(client, url), waited, patience=10).reply(HELLO))
    # a refused connection is a setup mistake, said at once: patience waits only for a busy service
    assert caught.value.kind == "unreachable" and waited.slept == []
    assert "gave up after waiting" not in str(caught.value)


def test_a_model_timing_out_beyond_patience_is_a_timeout_that_says_the_seconds() -> None:
    def slow(request: Request) -> str:
        time.sleep(0.4)
        return "late"

    with ModelServer(slow) as server, pytest.raises(ModelFailure) as caught:
        using(
            lambda client: patient(model(client, server.url), FakeClock(), patience=0).reply(HELLO),
            timeout=0.1,
        )
    assert caught.value.kind == "timeout"
    assert "within 0.1 s" in str(caught.value)


def test_the_give_up_says_how_long_was_actually_waited() -> None:
    clock = FakeClock()
    busy = Canned(429, {"error": {"message": "Rate limit reached"}}, {"Retry-After": "7"})
    with ModelServer(lambda request: busy) as server, pytest.raises(ModelFailure) as caught:
        using(lambda client: patient(model(client, server.url), clock, patience=20).reply(HELLO))
    assert clock.slept == [7.0, 7.0]
    assert len(server.requests) == 3
    assert "gave up after waiting 14.0 s (asked to wait 7 s; patience 20 s)" in str(caught.value)
    assert caught.value.kind == "busy" and caught.value.status == 429
    assert caught.value.message == "Rate limit reached"


def test_litellm_s_retry_hint_is_honoured() -> None:
    answers: list[str | Canned] = [litellm_busy("60"), "ok"]
    clock = FakeClock()
    with ModelServer(lambda request: answers.pop(0)) as server:
        using(lambda client: patient(model(client, server.url), clock).reply(HELLO))
    assert clock.slept == [60.0]


def test_the_busy_hints_in_their_order() -> None:
    now = datetime.datetime(2026, 12, 1, 12, 0, 0, tzinfo=datetime.UTC)
    date = email.utils.format_datetime(now + datetime.timedelta(seconds=90), usegmt=True)
    assert Hints({"retry-after-ms": "1500", "Retry-After": "9"}).seconds(now) == 1.5
    assert Hints({"Retry-After": "9", "llm_provider-retry-after": "60"}).seconds(now) == 9
    assert Hints({"Retry-After": date}).seconds(now) == 90
    assert Hints({"llm_provider-retry-after": "60", "x-ratelimit-reset-requests": "1s"}).seconds(now) == 60
    assert Hints({"x-ratelimit-reset-requests": "6m0s"}).seconds(now) == 360
    assert Hints({"x-ratelimit-reset-tokens": "20ms"}).seconds(now) == pytest.approx(0.02)
    assert Hints({"x-ratelimit-reset-requests": "1h2m3.5s"}).seconds(now) == pytest.approx(3723.5)
    assert Hints({"x-ratelimit-reset-requests": "soon", "Retry-After": "never"}).seconds(now) is None
    assert Hints({}).seconds(now) is None


def test_a_client_error_is_not_asked_again() -> None:
    refusal = Canned(401, {"error": {"message": "Incorrect API key"}})
    with ModelServer(lambda request: refusal) as server, pytest.raises(ModelFailure) as caught:
        using(lambda client: patient(model(client, server.url), FakeClock()).reply(HELLO))
    assert len(server.requests) == 1
    assert caught.value.status == 401 and caught.value.message == "Incorrect API key"


def test_a_busy_answer_carries_the_status_and_the_message() -> None:
    with (
        ModelServer(lambda request: Canned(503, {"message": "overloaded"})) as server,
        pytest.raises(Busy) as caught,
    ):
        using(lambda client: model(client, server.url).reply(HELLO))
    assert caught.value.status == 503 and caught.value.message == "overloaded" and caught.value.kind == "busy"


# --- the judge's reply ---------------------------------------------------------------------------


def decide(answers: list[str | Canned], claims: tuple[Claim, ...] = CLAIMS) -> tuple[object, list[Request]]:
    with ModelServer(lambda request: answers.pop(0)) as server:
        try:
            decided: object = using(
                lambda client: Checked(ChatJudge(model(client, server.url))).decide(claims, ())
            )
        except ModelFailure as error:
            decided = error
    return decided, server.requests


@pytest.mark.parametrize(
    "reply",
    [
        f"```json\n{GOOD}\n```",
        f"<think>The agent asked. Clear.</think>\n{GOOD}",
        f"<think>hmm</think>\n```\n{GOOD}\n```",
        f"Here is my answer: {GOOD} Hope it helps.",
        GOOD.replace("true", '"true"'),
        json.dumps({"decisions": [{"pass": "TRUE", "reason": "a"}, {"grade": "Clear", "reason": "b"}]}),
    ],
)
def test_a_wrapped_or_loosely_typed_reply_is_read(reply: str) -> None:
    decided, requests = decide([reply])
    assert not isinstance(decided, ModelFailure), decided
    assert len(requests) == 1
    verdict = decided.verdict  # type: ignore[attr-defined]
    assert verdict.holds and [claim.grade for claim in verdict.claims] == [None, "clear"]


def test_a_malformed_reply_is_asked_again_once_with_the_reason() -> None:
    decided, requests = decide(['{"decisions": [{"pass": true, "reason": "one"}]}', GOOD])
    assert not isinstance(decided, ModelFailure)
    roles = [message["role"] for message in requests[1]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert requests[1]["messages"][2]["content"] == '{"decisions": [{"pass": true, "reason": "one"}]}'
    assert "1 decision for 2 claims" in requests[1]["messages"][3]["content"]
    assert decided.usage.output == len('{"decisions": [{"pass": true, "reason": "one"}]}') + len(GOOD)  # type: ignore[attr-defined]


def test_a_reply_malformed_twice_keeps_the_raw_reply_and_the_tokens() -> None:
    raw = '{"decisions": [{"pass": true, "grade": 1.5, "reason": "x"}, ' + "x" * 3000
    decided, requests = decide(["not json", raw])
    assert isinstance(decided, ModelFailure) and decided.kind == "unreadable"
    assert len(requests) == 2
    assert decided.raw == raw[:2000]
    assert decided.usage == Usage(
        input=decided.usage.input if decided.usage else None, output=len("not json") + len(raw)
    )


# --- what an attempt leaves ----------------------------------------------------------------------


def attempt(user: Model, judge: Model) -> NoVerdict | Verdict:
    scenario = Scenario(name="s", user="You are Dana.", opening="", claims=(PLAIN,))
    outcome = asyncio.run(
        Attempt(scenario=scenario, index=0, max_turns=2).outcome(FakeAgent(), user, Checked(ChatJudge(judge)))
    )
    assert isinstance(outcome.decision, NoVerdict | Verdict)
    return outcome.decision


def slow(request: Request) -> str:
    time.sleep(SLOW)
    return "late"


def talks(request: Request) -> str:
    """A simulated user who says one thing, then is done (so the judge has a dialogue to judge)."""
    return "Hello there." if len(request["messages"]) <= 2 else "FINISHED"


@pytest.mark.parametrize(
    ("user", "judge", "reason", "detail"),
    [
        (slow, lambda r: JUDGED, "user_timeout", "user: "),
        (
            lambda r: Canned(401, {"error": {"message": "bad key"}}),
            lambda r: JUDGED,
            "user_failure",
            "user: ",
        ),
        (talks, slow, "judge_timeout", "judge: "),
        (
            talks,
            lambda r: Canned(404, {"message": "no such model"}),
            "judge_failure",
            "judge: ",
        ),
        (talks, lambda r: "no json at all", "judge_unreadable", "judge: "),
        (
            lambda r: Canned(400, {"error": {"message": "maximum context length is 2048 tokens"}}),
            lambda r: JUDGED,
            "context_exceeded",
            "user: ",
        ),
        (talks, lambda r: litellm_busy("60"), "model_busy", "judge: "),
    ],
)
def test_no_verdict_reasons_name_the_role_and_the_kind(
    user: Callable[[Request], str | Canned],
    judge: Callable[[Request], str | Canned],
    reason: str,
    detail: str,
) -> None:
    decision = played(user, judge)
    assert isinstance(decision, NoVerdict)
    assert decision.reason == reason and decision.detail.startswith(detail)


def test_the_no_verdict_keeps_the_status_the_message_and_the_raw_reply() -> None:
    failed = played(talks, lambda r: Canned(404, {"message": "The model `judge-x` does not exist."}))
    assert isinstance(failed, NoVerdict) and failed.status == 404
    assert failed.message == "The model `judge-x` does not exist."
    unread = played(talks, lambda r: "I think it passes.")
    assert isinstance(unread, NoVerdict) and unread.raw == "I think it passes."


def test_the_user_s_last_line_finished_ends_the_dialogue_without_sending_it() -> None:
    replies = iter(["Where is my order 4411?", "Great, thanks!\nFINISHED"])
    with ModelServer(lambda request: next(replies)) as users, ModelServer(lambda request: JUDGED) as judges:

        async def use(client: httpx.AsyncClient) -> tuple[int, object]:
            agent = FakeAgent(["It ships tomorrow."])
            scenario = Scenario(name="s", user="You are Dana.", opening="", claims=(PLAIN,))
            outcome = await Attempt(scenario=scenario, index=0, max_turns=5).outcome(
                agent, model(client, users.url), Checked(ChatJudge(model(client, judges.url)))
            )
            return len(outcome.turns), outcome.ended

        turns, ended = using(use)
    assert (turns, ended) == (1, "user_finished")


def test_simulated_user_requests_always_end_with_the_user() -> None:
    scenario = Scenario(name="s", user="You are Dana.", opening="Hi", claims=(PLAIN,))

    class Keeping:
        name = "keeping"

        def __init__(self) -> None:
            self.asked: list[tuple[Message, ...]] = []

        async def reply(self, messages: tuple[Message, ...], json: object = False) -> Reply:
            self.asked.append(messages)
            return Reply(text="More?" if len(self.asked) < 3 else "FINISHED")

    keeping = Keeping()
    asyncio.run(
        Attempt(scenario=scenario, index=0, max_turns=5).outcome(
            FakeAgent(["a", "b", "c", "d"]), keeping, Checked(ChatJudge(_Judging()))
        )
    )
    assert keeping.asked and all(messages[-1].role == "user" for messages in keeping.asked)
    assert all(SimulatedUser is not None for _ in keeping.asked)


class _Judging:
    name = "judging"

    async def reply(self, messages: tuple[Message, ...], json: object = False) -> Reply:
        return Reply(text=JUDGED)
