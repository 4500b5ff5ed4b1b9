"""A run sent to OpenTelemetry over OTLP/HTTP (docs/traces.md), received by an OTLP receiver of our
own that decodes the protobuf with the official classes: one trace per attempt with the attempt's
trace id, a root span per attempt, a child per agent request with the span id its traceparent
carried, the user's and the judge's model calls with the GenAI attributes, each claim an event."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest

from convy.play.agent import Usage
from convy.play.outcome import ClaimResult, Failed, NoVerdict, Outcome, Reused, Span, Turn, Verdict
from convy.play.wire.agent import JsonAgent
from convy.store.journal import RunJournal
from convy.store.otlp import Collector, Headers, ReceiverRefused, ReceiverUrl
from convy.store.runfile import RunSpec, ScenarioEntry
from convy.store.runs import Runs, StoredRun
from convy.store.traces import RunTraces
from tests.servers.otlp import OtlpReceiver, ReceivedSpan
from tests.servers.threads import ThreadServer
from tests.support.command import convy, only_run
from tests.support.oauth_agents import threads
from tests.support.traced import played

SPEC = RunSpec(
    agent="support",
    scenarios=(
        ScenarioEntry(name="refund", fingerprint="f-refund"),
        ScenarioEntry(name="escalate", fingerprint="f-escalate"),
    ),
    repeat=2,
    user_model="gpt-user",
    judge_model="gpt-judge",
)
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
FIRST, SECOND = "00f067aa0ba902b7", "b7ad6b7169203331"
HELD = Outcome(
    scenario="refund",
    index=0,
    fingerprint="f-refund",
    turns=(
        Turn(user="My order never came.", agent="Which order?", seconds=0.5, usage=Usage(input=10, output=20),
             span_id=FIRST),
        Turn(user="4411", agent="Refunded.", seconds=0.25, span_id=SECOND, first=0.1),
    ),
    seconds=1.75,
    decision=Verdict(
        holds=True,
        claims=(
            ClaimResult(claim="The agent refunds.", passed=True, reason="It did."),
            ClaimResult(claim="How clear?", passed=True, grade="clear", reason="Clear."),
            ClaimResult(claim="no apology", passed=True, check=True),
        ),
    ),
    user_usage=Usage(input=100, output=7),
    judge_usage=Usage(input=300, output=40),
    started="2026-11-30T18:30:00Z",
    trace_id=TRACE,
)  # fmt: skip
NOT_HELD = Outcome(
    scenario="refund",
    index=1,
    fingerprint="f-refund",
    turns=(Turn(user="Refund please.", agent="No.", seconds=0.1),),
    seconds=0.5,
    decision=Verdict(
        holds=False, claims=(ClaimResult(claim="The agent refunds.", passed=False, reason="No."),)
    ),
    user_usage=Usage(input=50),
    started="2026-11-30T18:30:01Z",
)
FAILED = Outcome(
    scenario="escalate",
    index=0,
    fingerprint="f-escalate",
    turns=(),
    seconds=0.3,
    decision=Failed(reason="http_500", detail="HTTP 500 from the agent", status=500),
    user_usage=Usage(input=20, output=5),
    started="2026-11-30T18:30:02Z",
)
REUSED = Outcome(
    scenario="escalate",
    index=1,
    fingerprint="f-escalate",
    turns=(Turn(user="Human please.", agent="Sure.", seconds=0.2),),
    seconds=0.4,
    decision=Verdict(holds=True, claims=(ClaimResult(claim="It hands over.", passed=True),)),
    reused=Reused(run="r0", scenario="escalate", index=1),
    judge_usage=Usage(input=0, output=0),  # as a reused verdict records it: no judge call
    started="",
)
OUTCOMES = (HELD, NOT_HELD, FAILED, REUSED)
SECONDS = 1_000_000_000


def stored(folder: Path, outcomes: tuple[Outcome, ...] = OUTCOMES) -> StoredRun:
    with RunJournal(folder).play(SPEC) as appended:
        for outcome in outcomes:
            appended.record(outcome)
    return Runs(folder.parent).one(folder)


def by_trace(spans: list[ReceivedSpan]) -> dict[str, list[ReceivedSpan]]:
    found: dict[str, list[ReceivedSpan]] = {}
    for span in spans:
        found.setdefault(span.trace_id, []).append(span)
    return found


def root(spans: list[ReceivedSpan]) -> ReceivedSpan:
    (only,) = [span for span in spans if not span.parent_id]
    return only


def test_each_attempt_is_a_trace_with_its_recorded_ids_the_genai_attributes_and_its_claims(
    tmp_path: Path,
) -> None:
    run = stored(tmp_path / "support" / "run-1")
    with OtlpReceiver() as receiver:
        sent = Collector(endpoint=ReceiverUrl(receiver.url)).send(RunTraces(run).attempts())
    assert (sent.traces, sent.spans) == (4, len(receiver.spans))
    traces = by_trace(receiver.spans)
    assert len(traces) == 4 and TRACE in traces
    spans = traces[TRACE]
    head = root(spans)
    assert head.name == "refund #0" and head.status == 1  # OK
    assert {k: head.attributes[k] for k in ("convy.scenario", "convy.index", "convy.holds")} == {
        "convy.scenario": "refund",
        "convy.index": 0,
        "convy.holds": True,
    }
    assert head.resource["service.name"] == "convy"
    assert all(span.parent_id == head.span_id for span in spans if span is not head)
    agent = sorted((s for s in spans if s.name.startswith("agent turn")), key=lambda s: s.start)
    assert [s.span_id for s in agent] == [FIRST, SECOND]
    assert [s.kind for s in agent] == [3, 3]  # CLIENT
    assert agent[0].attributes["input.value"] == "My order never came."
    assert agent[0].attributes["output.value"] == "Which order?"
    assert agent[0].attributes["gen_ai.usage.input_tokens"] == 10
    assert "gen_ai.usage.input_tokens" not in agent[1].attributes  # unknown, never 0
    user = next(s for s in spans if s.attributes.get("convy.role") == "user")
    judge = next(s for s in spans if s.attributes.get("convy.role") == "judge")
    assert user.name == "chat gpt-user" and judge.name == "chat gpt-judge"
    assert user.attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-user",
        "gen_ai.usage.input_tokens": 100,
        "gen_ai.usage.output_tokens": 7,
        "convy.role": "user",
    }
    assert (
        judge.attributes["gen_ai.usage.input_tokens"],
        judge.attributes["gen_ai.usage.output_tokens"],
    ) == (
        300,
        40,
    )
    # laid out in time: the attempt's start, the user's share before each request, the judge's last
    start = int(datetime(2026, 11, 30, 18, 30, tzinfo=UTC).timestamp()) * SECONDS
    share = (1_750_000_000 - 750_000_000) // 3
    assert head.start == start and head.end == start + int(1.75 * SECONDS)
    assert agent[0].start == start + share
    assert agent[1].start == agent[0].end + share
    assert user.start == start and user.end == agent[1].end
    assert judge.start == agent[1].end and judge.end == head.end
    claims = [event for event in head.events if event.name == "claim"]
    assert [(c.attributes["convy.claim"], c.attributes["convy.claim.pass"]) for c in claims] == [
        ("The agent refunds.", True),
        ("How clear?", True),
        ("no apology", True),
    ]
    assert claims[1].attributes["convy.claim.grade"] == "clear"
    assert (
        claims[2].attributes["convy.claim.check"] is True
        and claims[0].attributes["convy.claim.check"] is False
    )
    assert all(c.at == head.end for c in claims)


START, REFUSED, ANSWERED, NEXT, END = (
    "1111111111111111",
    "2222222222222222",
    "3333333333333333",
    "4444444444444444",
    "5555555555555555",
)
SESSION = Outcome(
    scenario="refund",
    index=0,
    fingerprint="f-refund",
    turns=(
        Turn(user="Hi", agent="Hello.", seconds=0.5, usage=Usage(input=3, output=4), span_id=ANSWERED),
        Turn(user="Refund 4411", agent="Refunded.", seconds=0.25, span_id=NEXT),
    ),
    seconds=3.0,
    decision=Verdict(holds=True, claims=(ClaimResult(claim="It refunds.", passed=True),)),
    user_usage=Usage(input=100, output=7),
    judge_usage=Usage(input=300, output=40),
    started="2026-11-30T18:30:00Z",
    trace_id=TRACE,
    spans=(
        Span(span_id=START, kind="session_start", at=0.125, seconds=0.25, status=201),
        Span(span_id=REFUSED, kind="turn", at=0.5, seconds=0.125, status=401),
        Span(span_id=ANSWERED, kind="turn", at=0.75, seconds=0.5, status=200),
        Span(span_id=NEXT, kind="turn", at=1.5, seconds=0.25, status=200),
        Span(span_id=END, kind="session_end", at=2.0, seconds=0.0625, status=204),
    ),
)


def test_each_recorded_agent_request_is_a_span_with_its_id_kind_times_and_status(tmp_path: Path) -> None:
    run = stored(tmp_path / "support" / "run-1", (SESSION,))
    with OtlpReceiver() as receiver:
        sent = Collector(endpoint=ReceiverUrl(receiver.url)).send(RunTraces(run).attempts())
    assert sent.spans == len(receiver.spans) == 8  # root, 5 requests, user, judge
    head = root(receiver.spans)
    start = int(datetime(2026, 11, 30, 18, 30, tzinfo=UTC).timestamp()) * SECONDS
    assert (head.trace_id, head.start, head.end) == (TRACE, start, start + 3 * SECONDS)
    requests = sorted((s for s in receiver.spans if s.name.startswith("agent ")), key=lambda s: s.start)
    at = {s.span_id: (s.at, s.seconds) for s in SESSION.spans}
    assert [
        (s.span_id, s.name, s.start, s.end, s.attributes.get("http.response.status_code"), s.status)
        for s in requests
    ] == [
        (START, "agent session start", start + SECONDS // 8, start + 3 * SECONDS // 8, 201, 1),
        (REFUSED, "agent turn 1 (sent again)", start + SECONDS // 2, start + 5 * SECONDS // 8, 401, 2),
        (ANSWERED, "agent turn 1", start + 3 * SECONDS // 4, start + 5 * SECONDS // 4, 200, 1),
        (NEXT, "agent turn 2", start + 3 * SECONDS // 2, start + 7 * SECONDS // 4, 200, 1),
        (END, "agent session end", start + 2 * SECONDS, start + 2 * SECONDS + SECONDS // 16, 204, 1),
    ]
    assert set(at) == {s.span_id for s in requests}
    assert all(s.parent_id == head.span_id and s.kind == 3 for s in requests)  # CLIENT, under the root
    refused, answered, second = requests[1:4]
    assert refused.message == "HTTP 401" and refused.attributes["convy.turn"] == 1
    assert "input.value" not in refused.attributes
    assert (answered.attributes["input.value"], answered.attributes["output.value"]) == ("Hi", "Hello.")
    assert answered.attributes["gen_ai.usage.output_tokens"] == 4
    assert (second.attributes["input.value"], second.attributes["output.value"]) == (
        "Refund 4411",
        "Refunded.",
    )
    # the models in the gaps: the user's over the dialogue, the judge's after the session's end
    user = next(s for s in receiver.spans if s.attributes.get("convy.role") == "user")
    judge = next(s for s in receiver.spans if s.attributes.get("convy.role") == "judge")
    assert (user.start, user.end) == (requests[0].end, requests[-1].start)
    assert (judge.start, judge.end) == (requests[-1].end, head.end)
    assert user.attributes["gen_ai.usage.input_tokens"] == 100


def test_a_turn_that_failed_the_attempt_is_its_last_request_with_no_answer(tmp_path: Path) -> None:
    failed = Outcome(
        scenario="refund",
        index=0,
        fingerprint="f-refund",
        turns=(Turn(user="Hi", agent="Hello.", seconds=0.5, span_id=ANSWERED),),
        seconds=2.0,
        decision=Failed(reason="timeout"),
        user_usage=Usage(input=10),
        started="2026-11-30T18:30:00Z",
        trace_id=TRACE,
        spans=(
            Span(span_id=ANSWERED, kind="turn", at=0.25, seconds=0.5, status=200),
            Span(span_id=REFUSED, kind="turn", at=1.0, seconds=0.25, status=503),
            Span(span_id=NEXT, kind="turn", at=1.5, seconds=0.5, status=0),
        ),
    )
    run = stored(tmp_path / "support" / "run-1", (failed,))
    (attempt,) = list(RunTraces(run).attempts())
    spans = attempt.spans()
    assert [(s.name, s.span_id, s.error) for s in spans[1:]] == [
        ("chat gpt-user", attempt.ids.span("user"), ""),
        ("agent turn 1", ANSWERED, ""),
        ("agent turn 2 (sent again)", REFUSED, "HTTP 503"),
        ("agent turn 2", NEXT, "no answer"),
    ]
    assert "http.response.status_code" not in spans[-1].attributes and spans[-1].attributes["convy.turn"] == 2
    assert spans[1].end == spans[0].end == spans[-1].end  # no judge: the user's calls go to the end


def test_a_real_session_run_sends_every_request_it_recorded(tmp_path: Path) -> None:
    with ThreadServer(auth=True, refused_tokens=1) as server:
        outcome = played(JsonAgent(threads(server), 5.0), "Hi", "Where is my order?", ready=True)
    kinds = [(s.kind, s.status) for s in outcome.spans]
    assert kinds == [("session_start", 401), ("session_start", 200), ("turn", 200), ("turn", 200),
                     ("session_end", 204)]  # fmt: skip
    named = msgspec.structs.replace(outcome, scenario="refund", fingerprint="f-refund")  # as SPEC names it
    run = stored(tmp_path / "support" / "run-1", (named,))
    with OtlpReceiver() as receiver:
        Collector(endpoint=ReceiverUrl(receiver.url)).send(RunTraces(run).attempts())
    head = root(receiver.spans)
    assert head.trace_id == outcome.trace_id
    requests = {s.span_id: s for s in receiver.spans if s.name.startswith("agent ")}
    assert set(requests) == {s.span_id for s in outcome.spans}
    assert [requests[s.span_id].name for s in outcome.spans] == [
        "agent session start",
        "agent session start",
        "agent turn 1",
        "agent turn 2",
        "agent session end",
    ]
    assert [requests[s.span_id].status for s in outcome.spans] == [2, 1, 1, 1, 1]
    assert all(s.parent_id == head.span_id and s.trace_id == outcome.trace_id for s in requests.values())
    assert [requests[turn.span_id].attributes["output.value"] for turn in outcome.turns] == [
        turn.agent for turn in outcome.turns
    ]
    starts = [requests[s.span_id].start for s in outcome.spans]
    assert starts == sorted(starts) and all(head.start <= at <= head.end for at in starts)


def test_attempts_without_recorded_ids_get_their_own_stable_ones_and_their_failures_show(
    tmp_path: Path,
) -> None:
    run = stored(tmp_path / "support" / "run-1")
    with OtlpReceiver() as receiver:
        Collector(endpoint=ReceiverUrl(receiver.url)).send(RunTraces(run).attempts())
        first = by_trace(list(receiver.spans))
        receiver.spans.clear()
        Collector(endpoint=ReceiverUrl(receiver.url)).send(RunTraces(run).attempts())
        again = by_trace(list(receiver.spans))
    assert {t: sorted(s.span_id for s in spans) for t, spans in first.items()} == {
        t: sorted(s.span_id for s in spans) for t, spans in again.items()
    }
    heads = {
        (root(s).attributes["convy.scenario"], root(s).attributes["convy.index"]): root(s)
        for s in first.values()
    }
    assert len({head.trace_id for head in heads.values()}) == 4
    not_held = heads[("refund", 1)]
    assert not_held.status == 2 and not_held.message == "1 of 1 claims failed"
    assert not_held.attributes["convy.holds"] is False
    assert not_held.attributes["convy.reason"] == "claims_failed"
    names = sorted(s.name for s in first[not_held.trace_id])
    assert names == ["agent turn 1", "chat gpt-judge", "chat gpt-user", "refund #1"]
    failed = heads[("escalate", 0)]
    assert (failed.status, failed.message) == (2, "http_500")
    assert failed.attributes["convy.reason"] == "http_500" and failed.attributes["convy.status"] == 500
    assert failed.attributes["convy.decision"] == "failed" and failed.events == []
    (user,) = [s for s in first[failed.trace_id] if s is not failed]  # no turn recorded, no judge
    assert (user.name, user.start, user.end) == ("chat gpt-user", failed.start, failed.end)
    reused = heads[("escalate", 1)]
    assert reused.attributes["convy.reused"] == "r0 escalate #1"
    assert not any(s.attributes.get("convy.role") == "judge" for s in first[reused.trace_id])
    started = datetime.strptime(run.file.started, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert reused.start == int(started.timestamp()) * SECONDS  # run.json's start when its own is ""


def test_a_judged_verdict_without_judge_tokens_still_has_its_judge_span(tmp_path: Path) -> None:
    judged = NOT_HELD
    run = stored(tmp_path / "support" / "run-1", (judged,))
    (attempt,) = list(RunTraces(run).attempts())
    names = [span.name for span in attempt.spans()]
    assert names == ["refund #1", "chat gpt-user", "agent turn 1", "chat gpt-judge"]


def test_a_no_verdict_of_the_judge_has_a_judge_span_one_of_the_user_none(tmp_path: Path) -> None:
    judge = Outcome(
        scenario="refund",
        index=0,
        fingerprint="f",
        turns=(),
        seconds=1.0,
        decision=NoVerdict(reason="judge_timeout"),
        started="2026-11-30T18:30:00Z",
    )
    user = Outcome(scenario="refund", index=1, fingerprint="f", turns=(), seconds=1.0,
                   decision=NoVerdict(reason="user_timeout"), started="2026-11-30T18:30:00Z")  # fmt: skip
    run = stored(tmp_path / "support" / "run-1", (judge, user))
    first, second = (attempt.spans() for attempt in RunTraces(run).attempts())
    assert [s.name for s in first] == ["refund #0", "chat gpt-judge"]
    assert [s.name for s in second] == ["refund #1"]
    assert first[0].error == "judge_timeout"


def test_spans_go_in_batches_and_a_refusal_names_the_receiver_s_words_not_the_key(tmp_path: Path) -> None:
    run = stored(tmp_path / "support" / "run-1")
    key = "phx-secret-key-123456"
    with OtlpReceiver(wanted=("api_key", key)) as receiver:
        endpoint = ReceiverUrl(receiver.url + "/")
        sent = Collector(endpoint=endpoint, headers={"api_key": key}, batch=4).send(RunTraces(run).attempts())
        assert sent.spans == len(receiver.spans) and len(receiver.requests) >= 3
        assert receiver.requests[0]["content-type"] == "application/x-protobuf"
        with pytest.raises(ReceiverRefused) as refused:
            Collector(endpoint=endpoint, headers={"api_key": "wrong-key-999999"}).send(
                RunTraces(run).attempts()
            )
        assert str(refused.value) == f"{receiver.url}/v1/traces answered 401: no valid key"
    with (
        OtlpReceiver(refuse=(400, f"bad span, key {key}")) as refusing,
        pytest.raises(ReceiverRefused) as bad,
    ):
        Collector(endpoint=ReceiverUrl(refusing.url), headers={"api_key": key}).send(
            RunTraces(run).attempts()
        )
    assert "answered 400: bad span, key ***" in str(bad.value) and key not in str(bad.value)


def test_an_unreachable_receiver_is_refused_with_why(tmp_path: Path) -> None:
    run = stored(tmp_path / "support" / "run-1", (HELD,))
    with OtlpReceiver() as receiver:
        url = receiver.url
    with pytest.raises(ReceiverRefused) as refused:
        Collector(endpoint=ReceiverUrl(url), timeout=0.5).send(RunTraces(run).attempts())
    assert str(refused.value) == f"{url}/v1/traces could not be reached: [Errno 111] Connection refused"


def test_endpoints_and_headers_are_checked_before_any_request() -> None:
    assert ReceiverUrl("http://localhost:6006").problem() == ""
    assert ReceiverUrl("http://localhost:6006").traces() == "http://localhost:6006/v1/traces"
    assert ReceiverUrl("https://otel.example/v1/traces/").traces() == "https://otel.example/v1/traces"
    assert ReceiverUrl("https://u:pw@otel.example/p?key=s").shown() == "https://otel.example/p/v1/traces"
    assert "http://" in ReceiverUrl("localhost:4318").problem()
    assert ReceiverUrl("ftp://otel.example").problem() != ""
    assert Headers(("Authorization: Basic abc", "x-key:  v "), "--header").parsed() == {
        "Authorization": "Basic abc",
        "x-key": "v",
    }
    with pytest.raises(Exception, match="--header: line 2 is not `Name: value`"):
        Headers(("a: b", "secret-value"), "--header").parsed()


def test_convy_export_otlp_sends_a_demo_run_and_every_attempt_s_trace(tmp_path: Path) -> None:
    assert convy("run", "--demo", cwd=tmp_path).returncode == 0
    folder = only_run(tmp_path / "results")
    lines = [json.loads(line) for line in (folder / "attempts.jsonl").read_text().splitlines()]
    key = "Bearer sk-otlp-0123456789"
    with OtlpReceiver(wanted=("Authorization", key)) as receiver:
        sending = ("export", str(folder), "--otlp", receiver.url, "--header")
        done = convy(*sending, f"Authorization: {key}", cwd=tmp_path)
        refused = convy(*sending, "Authorization: sk-wrong-1234567", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"convy: sent {len(lines)} traces" in done.stdout and "sk-otlp" not in done.stdout + done.stderr
    traces = by_trace(receiver.spans)
    assert len(traces) == len(lines)
    heads = {
        (root(s).attributes["convy.scenario"], root(s).attributes["convy.index"]) for s in traces.values()
    }
    assert heads == {(line["scenario"], line["index"]) for line in lines}
    recorded = {line["trace_id"] for line in lines if line["trace_id"]}
    assert recorded <= set(traces)
    spans = [span for spans in traces.values() for span in spans]
    models = {s.attributes.get("gen_ai.request.model") for s in spans} - {None}
    assert models == {"scripted-user", "scripted-judge"}
    assert all(
        isinstance(s.attributes["gen_ai.usage.input_tokens"], int)
        for s in spans
        if "convy.role" in s.attributes
    )
    assert not (tmp_path / "results" / "support" / folder.name / "export").exists()
    assert refused.returncode == 1 and "answered 401: no valid key" in refused.stderr
    assert "sk-wrong" not in refused.stderr + refused.stdout


def test_convy_export_otlp_refuses_a_bad_url_or_header_with_exit_2(tmp_path: Path) -> None:
    bad = convy("export", str(tmp_path), "--otlp", "otel.example:4318", cwd=tmp_path)
    assert bad.returncode == 2 and "--otlp: must be an http:// or https:// URL" in bad.stderr
    header = convy("export", str(tmp_path), "--otlp", "http://127.0.0.1:9", "--header", "Bearer sk-123456789",
                   cwd=tmp_path)  # fmt: skip
    assert header.returncode == 2 and "--header: line 1 is not `Name: value`" in header.stderr
    assert "sk-123456789" not in header.stderr


def test_without_the_otel_extra_the_error_says_what_to_install(tmp_path: Path) -> None:
    folder = tmp_path / "support" / "run-1"
    stored(folder, (HELD,))
    script = (
        "import sys\n"
        "sys.modules['opentelemetry.exporter.otlp.proto.http.trace_exporter'] = None\n"
        "from convy.cli import main\n"
        f"sys.exit(main(['export', {str(folder)!r}, '--otlp', 'http://127.0.0.1:9']))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert (
        "--otlp: sending to OpenTelemetry needs its packages: pip install convy-action[otel]" in done.stderr
    )


def test_the_command_starts_without_opentelemetry(tmp_path: Path) -> None:
    script = "import sys\nfrom convy.cli import main\nmain(['--help'])\n"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", script], capture_output=True, text=True, timeout=60
    )
    assert "convy" in done.stderr and "opentelemetry" not in done.stderr
