"""A demo run sent by `convy export RUN --otlp URL` to a real OTLP receiver — Arize Phoenix's server,
started here on free ports in a folder of its own — and read back through Phoenix's REST API: every
attempt's trace, its root with scenario, index and holds, the agent requests with their span ids,
the models' calls with the GenAI attributes, the claims as events.

Phoenix lives in a virtual environment of its own (its dependencies are not ours): `.ci/run` makes
`.venv-phoenix` in the clone; `TEST_PHOENIX` may name another `phoenix` executable."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from convy.store.runs import Runs
from convy.store.traces import RunTraces
from tests.support.command import convy, only_run
from tests.support.phoenix import got


def spans(url: str, wanted: int) -> list[dict[str, object]]:
    """Every span Phoenix holds once it holds `wanted` (it stores what it receives a moment later)."""
    deadline = time.monotonic() + 60
    while True:
        found: list[dict[str, object]] = []
        cursor = ""
        while True:
            page = got(
                f"{url}/v1/projects/default/spans?limit=1000" + (f"&cursor={cursor}" if cursor else "")
            )
            assert isinstance(page, dict)
            found += page["data"]
            cursor = page.get("next_cursor") or ""
            if not cursor:
                break
        if len(found) >= wanted or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


@pytest.mark.timeout(400)
def test_phoenix_receives_every_attempt_as_a_trace_with_its_ids_genai_attributes_and_claims(
    tmp_path: Path, phoenix: str
) -> None:
    assert convy("run", "--demo", cwd=tmp_path).returncode == 0
    folder = only_run(tmp_path / "results")
    sent = convy("export", str(folder), "--otlp", phoenix, cwd=tmp_path)
    assert sent.returncode == 0, sent.stderr
    run = Runs(folder.parent).one(folder)
    expected = {attempt.ids.trace(): attempt.spans() for attempt in RunTraces(run).attempts()}
    outcomes = list(run.outcomes())
    assert len(expected) == len(outcomes)
    assert {o.trace_id for o in outcomes if o.trace_id} <= set(expected)
    received = spans(phoenix, sum(len(s) for s in expected.values()))
    by_trace: dict[str, list[dict[str, object]]] = {}
    for span in received:
        context = span["context"]
        assert isinstance(context, dict)
        by_trace.setdefault(context["trace_id"], []).append(span)
    assert set(by_trace) == set(expected)
    for trace, ours in expected.items():
        theirs = by_trace[trace]
        assert sorted(s["context"]["span_id"] for s in theirs) == sorted(s.span_id for s in ours)
        (root,) = [s for s in theirs if not s["parent_id"]]
        attributes = root["attributes"]
        assert isinstance(attributes, dict)
        outcome = next(
            o
            for o in outcomes
            if (o.scenario, o.index) == (attributes["convy.scenario"], attributes["convy.index"])
        )
        assert attributes["convy.holds"] == bool(getattr(outcome.decision, "holds", False))
        claims = [e for e in root["events"] if e["name"] == "claim"]
        assert [c["attributes"]["convy.claim"] for c in claims] == [
            c.claim for c in getattr(outcome.decision, "claims", ())
        ]
        requests = sorted(
            (s for s in theirs if str(s["name"]).startswith("agent turn")), key=lambda s: str(s["start_time"])
        )
        assert [s["context"]["span_id"] for s in requests] == [
            attempt_span.span_id for attempt_span in ours if attempt_span.name.startswith("agent turn")
        ]
        assert all(s["parent_id"] == root["context"]["span_id"] for s in theirs if s is not root)
        user = [s for s in theirs if s["attributes"].get("convy.role") == "user"]
        assert [s["attributes"]["gen_ai.request.model"] for s in user] == ["scripted-user"]
        assert user[0]["attributes"]["gen_ai.usage.input_tokens"] == outcome.user_usage.input
        assert user[0]["attributes"]["gen_ai.usage.output_tokens"] == outcome.user_usage.output
    judges = [s for s in received if s["attributes"].get("convy.role") == "judge"]
    assert judges and all(s["attributes"]["gen_ai.request.model"] == "scripted-judge" for s in judges)
    assert all(isinstance(s["attributes"]["gen_ai.usage.input_tokens"], int) for s in judges)
