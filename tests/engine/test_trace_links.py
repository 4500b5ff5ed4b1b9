"""Trace links (docs/traces.md): `trace-url`, a URL template with `{trace_id}` and/or `{conversation}`,
checked before anything runs (exit 2 naming the setting), filled URL-encoded for each attempt that
has what it names; each attempt in report.html links to its trace, and so do the comment's attempts
that did not hold. And the end to end: a real run whose every attempt line has the trace its
requests carried — or none with `trace-context: false`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest

from convy.compare.comparison import Compared, NoBaseline
from convy.compare.gate import Gate
from convy.compare.summary import Summed
from convy.draw.links import Links, TraceLink
from convy.draw.markdown import CommentMarkdown
from convy.draw.report import Report
from convy.errors import ConfigurationError
from convy.play.outcome import Failed, Outcome
from convy.project.traceurl import TraceUrl
from convy.store.runfile import RunFile, RunSpec, ScenarioEntry
from tests.support.command import convy, lines, only_run
from tests.support.html import parsed
from tests.support.outcomes import outcome

LANGFUSE = "https://cloud.langfuse.com/project/p1/traces/{trace_id}"
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


# The template


def test_a_template_is_filled_with_the_attempts_trace_id_and_conversation_url_encoded() -> None:
    url = TraceUrl("https://tracing.example/t/{trace_id}?session={conversation}").checked()
    assert url.filled(TRACE, "run-refund late/order-0 ab") == (
        f"https://tracing.example/t/{TRACE}?session=run-refund%20late%2Forder-0%20ab"
    )
    assert (
        TraceUrl(LANGFUSE).checked().filled(TRACE, "c")
        == f"https://cloud.langfuse.com/project/p1/traces/{TRACE}"
    )


def test_no_link_without_the_value_the_template_names() -> None:
    assert TraceUrl(LANGFUSE).filled("", "c1") == "", "no trace id: trace context was off"
    assert TraceUrl("https://t.example/s/{conversation}").filled("", "c1") == "https://t.example/s/c1"
    assert TraceUrl().filled(TRACE, "c1") == ""


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ("https://t.example/{span_id}/{trace_id}", "unknown placeholder {span_id}"),
        ("https://t.example/traces", "names neither {trace_id} nor {conversation}"),
        ("ftp://t.example/{trace_id}", "must be an http:// or https:// address"),
        ("javascript:alert(1)//{trace_id}", "must be an http:// or https:// address"),
        ("https://t.example/{trace_id}}", "a brace that opens or closes no placeholder"),
        ("https://t.example/ {trace_id}", "without blanks"),
        ("https://t.example/<b>{trace_id}", "without blanks"),
    ],
)
def test_a_bad_template_is_a_configuration_error_naming_the_setting(template: str, said: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        TraceUrl(template).checked()
    assert caught.value.where == "trace-url"
    assert said in str(caught.value)


def test_a_bad_template_stops_the_run_before_any_request(tmp_path: Path) -> None:
    done = convy("run", "--demo", "--trace-url", "https://t.example/{span}", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "trace-url" in done.stderr and "{span}" in done.stderr
    assert not (tmp_path / "results").exists(), "nothing was played"


# The pages and the comment


def traced(scenario: str, index: int, holds: bool | None, trace_id: str = TRACE) -> Outcome:
    made = outcome(scenario, index, holds)
    return Outcome(
        scenario=made.scenario,
        index=made.index,
        fingerprint=made.fingerprint,
        turns=made.turns,
        seconds=made.seconds,
        decision=made.decision,
        conversation=f"run-{scenario}-{index}",
        trace_id=trace_id,
    )


def run_of(outcomes: list[Outcome]) -> tuple[RunFile, list[Outcome]]:
    names = sorted({o.scenario for o in outcomes})
    entries = tuple(ScenarioEntry(name=n, fingerprint="f") for n in names)
    spec = RunSpec(agent="bot", scenarios=entries, repeat=3, user_model="u", judge_model="j")
    return RunFile(format=1, spec=spec, status="finished", started="2026-12-01T10:00:00Z"), outcomes


def test_each_attempt_in_the_report_links_to_its_trace() -> None:
    outcomes = [
        traced("refund", 0, True, "a" * 32),
        traced("refund", 1, False, "b" * 32),
        traced("refund", 2, True, ""),
    ]
    file, outcomes = run_of(outcomes)
    summary = Summed(file, "results/bot/run", outcomes).summary()
    trace = TraceLink(TraceUrl("https://t.example/{trace_id}?c={conversation}").checked())
    page = parsed(Report(summary, outcomes, None, trace).html())
    links = {
        attempt.all("span", "title")[0].text(): [a.attributes["href"] for a in attempt.all("a")]
        for attempt in page.all("details", "attempt")
    }
    assert links == {
        "Attempt 1": [f"https://t.example/{'a' * 32}?c=run-refund-0"],
        "Attempt 2": [f"https://t.example/{'b' * 32}?c=run-refund-1"],
        "Attempt 3": [],
    }
    (link,) = page.all("details", "attempt")[1].all("a")
    assert link.text() == "trace" and link.attributes["rel"] == "noopener noreferrer"
    assert "https://t.example" not in Report(summary, outcomes, None).html(), "no trace-url: no link"


def test_the_comments_attempts_that_did_not_hold_link_to_their_traces() -> None:
    outcomes = [traced("refund", i, i != 1, f"{i:032x}") for i in range(3)]
    outcomes += [
        Outcome(
            scenario="order",
            index=0,
            fingerprint="f",
            turns=(),
            seconds=0.1,
            decision=Failed(reason="http_500"),
            conversation="run-order-0",
            trace_id="f" * 32,
        ),
        traced("order", 1, False, "e" * 32),
        traced("order", 2, None, "d" * 32),
    ]
    file, outcomes = run_of(outcomes)
    comparison = Compared(Summed(file, "run", outcomes).summary(), NoBaseline(why="first")).comparison()
    decision = Gate().decision(comparison)
    links = Links(trace=TraceLink(TraceUrl(LANGFUSE).checked()))
    text = CommentMarkdown(comparison, decision, links).text()
    base = "https://cloud.langfuse.com/project/p1/traces/"
    assert f"traces of attempts that did not hold: [attempt 2](<{base}{1:032x}>)" in text
    assert f"[attempt 1](<{base}{'f' * 32}>) · [attempt 2](<{base}{'e' * 32}>)" in text
    assert base + f"{0:032x}" not in text, "an attempt that held is not listed"
    assert base + "d" * 32 not in text, "nor one without verdict"
    assert "traces of attempts" not in CommentMarkdown(comparison, decision).text(), "no trace-url: no link"


# End to end


def test_a_run_records_each_attempts_trace_and_its_pages_link_to_it(tmp_path: Path) -> None:
    template = "https://tracing.example/p1/traces/{trace_id}?session={conversation}"
    done = convy("run", "--demo", "--trace-url", template, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    folder = only_run(tmp_path / "results")
    attempts = lines(folder)
    traces = [str(a["trace_id"]) for a in attempts]
    assert all(re.fullmatch(r"[0-9a-f]{32}", t) for t in traces) and len(set(traces)) == len(traces)
    for attempt in attempts:
        turns = attempt["turns"]
        assert isinstance(turns, list)
        assert all(re.fullmatch(r"[0-9a-f]{16}", turn["span_id"]) for turn in turns)
    page = (folder / "report.html").read_text(encoding="utf-8")
    hrefs = set(re.findall(r'href="(https://tracing\.example/[^"]+)"', page))
    shown = {
        f"https://tracing.example/p1/traces/{a['trace_id']}?session={quote(str(a['conversation']), safe='')}"
        for a in attempts
    }
    assert hrefs and hrefs <= shown
    assert len(hrefs) == len(parsed(page).all("details", "attempt"))
    comment = (folder / "comment.md").read_text(encoding="utf-8")
    unheld = [a for a in attempts if a["decision"].get("holds") is False or a["decision"]["type"] == "failed"]  # type: ignore[union-attr,index]
    assert unheld and any(f"traces/{a['trace_id']}" in comment for a in unheld)


def test_trace_context_off_records_no_trace_and_links_none(tmp_path: Path) -> None:
    done = convy("run", "--demo", "--trace-context=false", "--trace-url", LANGFUSE, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    folder = only_run(tmp_path / "results")
    attempts = lines(folder)
    assert {a["trace_id"] for a in attempts} == {""} and {json.dumps(a["spans"]) for a in attempts} == {"[]"}
    assert "langfuse" not in (folder / "report.html").read_text(encoding="utf-8")


def test_links_can_be_added_to_a_run_played_without_them(tmp_path: Path) -> None:
    done = convy("run", "--demo", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    folder = only_run(tmp_path / "results")
    assert "tracing.example" not in (folder / "report.html").read_text(encoding="utf-8")
    template = "https://tracing.example/{trace_id}"
    reported = convy("report", str(folder), "--trace-url", template, cwd=tmp_path)
    assert reported.returncode == 0, reported.stderr
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert any(f'href="https://tracing.example/{a["trace_id"]}"' in page for a in lines(folder))
    refused = convy("compare", str(folder), str(folder), "--trace-url", "https://t.example/{x}", cwd=tmp_path)
    assert refused.returncode == 2 and "trace-url" in refused.stderr
