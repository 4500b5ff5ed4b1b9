"""The pages as files: standalone (no reference outside the page), their data what the model
computed (a row per scenario, `unknown` for what nobody reported), agent text kept inside the page's
JSON, an agent's Markdown as a tree of text, and a size that stays reasonable for big runs."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from markdown_it import MarkdownIt

from convy.compare.comparison import Compared, NoBaseline
from convy.compare.gate import Gate, GateDecision
from convy.compare.summary import Summary, Summed
from convy.draw.report import ComparisonPage, Index, Report
from convy.draw.shown import Amount
from convy.draw.transcript import LIMIT, AgentMarkdown
from convy.play.agent import Call, Thought, Usage
from convy.play.outcome import ClaimResult, Failed, NoVerdict, Outcome, Turn, Verdict
from convy.store.journal import RunFile, RunSpec, ScenarioEntry

BREAKOUT = "</script><script>alert(1)</script>"
DATA = re.compile(r'<script type="application/json" id="data">(.*?)</script>', re.DOTALL)
SVG_NAMESPACE = "http://www.w3.org/2000/svg"


def outcome(
    scenario: str, index: int, holds: bool | None, answer: str = "Fine.", usage: Usage | None = None
) -> Outcome:
    decision: Verdict | Failed | NoVerdict
    if holds is None:
        decision = NoVerdict(reason="model_failure")
    else:
        decision = Verdict(
            holds=holds, claims=(ClaimResult(claim="It helps.", passed=holds, reason="Seen."),)
        )
    steps = (Call(name="lookup", arguments="{}", result="ok"), Thought(text="hm"))
    turn = Turn(user="Hello?", agent=answer, seconds=0.25, usage=usage, steps=steps)
    return Outcome(
        scenario=scenario, index=index, fingerprint="f", turns=(turn,), seconds=0.5, decision=decision
    )


def summed(
    results: dict[str, list[bool | None]],
    answer: str = "Fine.",
    usage: Usage | None = None,
    folder: str = "r/a/1",
) -> tuple[Summary, list[Outcome]]:
    spec = RunSpec(
        agent="a",
        repeat=max(len(v) for v in results.values()),
        scenarios=tuple(
            ScenarioEntry(name=n, fingerprint="f", file=f"scenarios/{n}.yaml", line=3) for n in results
        ),
    )
    outcomes = [outcome(n, i, h, answer, usage) for n, hs in results.items() for i, h in enumerate(hs)]
    file = RunFile(format=1, spec=spec, status="finished", started="2026-11-30T18:30:00Z")
    return Summed(file, folder, outcomes).summary(), outcomes


def data(page: str) -> Any:
    found = DATA.search(page)
    assert found is not None
    return json.loads(found.group(1))


def outside(page: str) -> str:
    """The page without its data: the HTML, the style and the script."""
    return DATA.sub("", page)


def pages() -> Iterator[str]:
    summary, outcomes = summed(
        {"x": [True, False, None], "y": [True, True, True]}, answer="See https://e.example"
    )
    comparison = Compared(summary, summary).comparison()
    decision = Gate().decision(comparison)
    yield Report(summary, outcomes, decision).html()
    yield ComparisonPage(comparison, decision).html()
    yield Index((summary,)).html()


@pytest.mark.parametrize("page", list(pages()), ids=["report", "comparison", "index"])
def test_a_page_refers_to_nothing_outside_itself(page: str) -> None:
    html = outside(page)
    markup = re.sub(r"<(script|style)>.*?</\1>", "", html, flags=re.DOTALL)
    addresses = re.findall(r"""(?:src|href|action|srcset)\s*=\s*["']?([^"'\s>]*)""", markup, re.IGNORECASE)
    assert addresses and all(a.startswith("data:") for a in addresses), addresses
    assert re.findall(r"url\(", html) == []
    assert re.findall(r"@import", html) == []
    assert re.findall(r"https?:", html.replace(SVG_NAMESPACE, "")) == []
    assert "https://e.example" not in html


@pytest.mark.parametrize("page", list(pages()), ids=["report", "comparison", "index"])
def test_the_policy_allows_no_request_and_only_the_pages_own_script_and_style(page: str) -> None:
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    rules = dict(rule.strip().split(" ", 1) for rule in policy.group(1).split(";"))
    assert rules["default-src"] == "'none'" and rules["img-src"] == "data:"
    script = re.findall(r"<script>(.*?)</script>", page, re.DOTALL)
    style = re.findall(r"<style>(.*?)</style>", page, re.DOTALL)
    assert len(script) == 1 and len(style) == 1
    for source, rule in ((script[0], "script-src"), (style[0], "style-src")):
        digest = base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()
        assert rules[rule] == f"'sha256-{digest}'"


def test_the_report_has_one_row_per_scenario_in_declaration_order_and_a_window_each() -> None:
    summary, outcomes = summed({"b": [True, False], "a": [True, True], "c": [None, None]})
    view = data(Report(summary, reversed(outcomes)).html())
    rows = view["grids"][0]["rows"]
    assert [row["cells"][0]["text"] for row in rows] == ["b", "a", "c"]
    assert [row["status"] for row in rows] == ["flaky", "passing", "unjudged"]
    assert [row["window"] for row in rows] == [0, 1, 2]
    assert [w["title"] for w in view["windows"]] == ["b", "a", "c"]
    assert [a["title"] for a in view["windows"][0]["attempts"]] == ["Attempt 1", "Attempt 2"]
    assert view["windows"][0]["attempts"][1]["outcome"] == "did not hold"
    assert view["windows"][2]["attempts"][0]["outcome"] == "no verdict: model_failure"
    assert view["headline"] is None


def test_the_figures_are_the_models_own() -> None:
    summary, outcomes = summed({"x": [True, True, False, None]})
    view = data(Report(summary, outcomes).html())
    tiles = {tile["label"]: tile for tile in view["tiles"]}
    assert tiles["Pass rate"]["value"] == f"{summary.rate.value * 100:.1f}%"  # type: ignore[union-attr]
    assert "2 of 3 judged held" in tiles["Pass rate"]["note"]
    assert tiles["Without verdict"]["value"] == f"{summary.no_verdict_attempts}" == "1"
    assert tiles["Without verdict"]["note"] == "25.0% of attempts · model_failure × 1"
    assert tiles["Agent failures"]["value"] == "0" and tiles["Agent failures"]["note"] == "none"
    assert tiles["pass^4, mean over scenarios"]["value"] == summary.pass_k.text()
    assert view["grids"][0]["rows"][0]["cells"][2]["text"] == summary.scenarios[0].rate.text()


def test_numbers_nobody_reported_show_unknown() -> None:
    summary, outcomes = summed({"x": [None, None]})
    view = data(Report(summary, outcomes).html())
    tiles = {tile["label"]: tile for tile in view["tiles"]}
    assert tiles["Pass rate"]["value"] == "unknown"
    assert tiles["Agent tokens per attempt, median"]["value"] == "unknown"
    assert tiles["Model tokens per attempt, median"]["value"] == "user unknown"
    row = view["grids"][0]["rows"][0]["cells"]
    assert (row[2]["text"], row[4]["text"]) == ("unknown", "unknown")
    turn = view["windows"][0]["attempts"][0]["turns"][0]
    assert "agent tokens unknown" in turn["facts"]
    bar = view["charts"][0]["rows"][0]["bars"][0]
    assert (bar["value"], bar["text"]) == (None, "unknown")
    assert Amount(value=None, unit="s").text() == "unknown" and Amount(value=None).signed() == "unknown"


def test_a_token_count_reported_in_part_is_unknown_in_that_part() -> None:
    summary, outcomes = summed({"x": [True]}, usage=Usage(input=12))
    view = data(Report(summary, outcomes).html())
    assert "agent tokens 12 in · unknown out" in view["windows"][0]["attempts"][0]["turns"][0]["facts"]


def test_a_script_in_agent_text_stays_inside_the_pages_data() -> None:
    answer = f"Sure. {BREAKOUT} <img src=x onerror=alert(2)> \u2028 & done"
    summary, outcomes = summed({"x": [True]}, answer=answer)
    page = Report(summary, outcomes).html()
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert "alert" not in outside(page)
    raw = DATA.search(page).group(1)  # type: ignore[union-attr]
    assert not set(raw) & {"<", ">", "&", "\u2028", "\u2029"}
    agent = data(page)["windows"][0]["attempts"][0]["turns"][0]["agent"]
    assert agent == [["p", f"Sure. {BREAKOUT} <img src=x onerror=alert(2)> \u2028 & done"]]


def test_a_scenario_name_is_data_too() -> None:
    summary, outcomes = summed({"<script>alert(3)</script>": [True]})
    page = Report(summary, outcomes).html()
    assert "alert(3)" not in outside(page)
    assert data(page)["grids"][0]["rows"][0]["cells"][0]["text"] == "<script>alert(3)</script>"


def test_agent_markdown_becomes_a_tree_of_text_with_no_link_and_no_html() -> None:
    markdown = AgentMarkdown(MarkdownIt("commonmark", {"html": False}))
    said = (
        "# Done\n\nYour **refund** is *on its way*: `R-1`.\n\n- one\n- two\n\n"
        "<div onclick=x>raw</div>\n\n[site](https://e.example) [bad](javascript:alert(1)) "
        "![pic](https://e.example/p.png) <https://e.example/auto>\n\n```\ncode <b>\n```"
    )
    assert markdown.nodes(said) == [
        ["h4", "Done"],
        ["p", "Your ", ["strong", "refund"], " is ", ["em", "on its way"], ": ", ["code", "R-1"], "."],
        ["ul", ["li", "one"], ["li", "two"]],
        ["p", "<div onclick=x>raw</div>"],
        [
            "p",
            ["span", "site", " ", ["code", "https://e.example"]],
            " [bad](javascript:alert(1)) ",
            ["span", "[image: ", "pic", "] ", ["code", "https://e.example/p.png"]],
            " ",
            ["code", "https://e.example/auto"],
        ],
        ["pre", "code <b>"],
    ]
    assert markdown.nodes("Plain words, nothing else") == [["p", "Plain words, nothing else"]]
    assert markdown.nodes("  ") == []


def test_a_long_text_is_cut_with_a_note() -> None:
    summary, outcomes = summed({"x": [True]}, answer="word " * (LIMIT // 2))
    turn = data(Report(summary, outcomes).html())["windows"][0]["attempts"][0]["turns"][0]
    kept = turn["agent"][0][1]
    assert len(kept) <= LIMIT
    assert turn["agent"][-1] == [
        "p",
        ["em", f"[cut: the first {LIMIT:,} of {LIMIT // 2 * 5:,} characters are shown]"],
    ]


def test_the_report_streams_its_outcomes_once() -> None:
    summary, outcomes = summed({"x": [True, False]})
    consumed: list[int] = []

    def stream() -> Iterator[Outcome]:
        for o in outcomes:
            consumed.append(o.index)
            yield o

    view = data(Report(summary, stream()).html())
    assert consumed == [0, 1] and len(view["windows"][0]["attempts"]) == 2


def test_the_gates_decision_is_the_headline() -> None:
    summary, outcomes = summed({"x": [True]})
    decision = GateDecision(
        verdict="fail", rule="min-pass-rate", explanation="pass rate 10.0% is under 50.0%"
    )
    view = data(Report(summary, outcomes, decision).html())
    assert view["headline"] == {
        "verdict": "fail",
        "rule": "min-pass-rate",
        "explanation": "pass rate 10.0% is under 50.0%",
        "tone": "bad",
    }


def test_the_comparison_page_shows_statuses_regressions_first_and_deltas() -> None:
    before, _ = summed(
        {"a": [True] * 6, "b": [True, False] * 3, "gone": [True] * 6}, usage=Usage(input=5, output=5)
    )
    now, _ = summed({"a": [False] * 6, "b": [True] * 6, "new": [True] * 6})
    comparison = Compared(now, before).comparison()
    decision = Gate().decision(comparison)
    view = data(ComparisonPage(comparison, decision).html())
    rows = view["grids"][0]["rows"]
    assert [(r["cells"][0]["text"], r["status"], r["cells"][1]["tone"]) for r in rows] == [
        ("a", "regressed", "bad"),
        ("new", "new", "note"),
        ("gone", "removed", "note"),
        ("b", "higher", "plain"),
    ]
    assert rows[0]["cells"][4]["text"] == comparison.scenarios[0].p.text()
    tiles = {tile["label"]: tile for tile in view["tiles"]}
    assert tiles["Change on common scenarios"]["value"] == f"−{comparison.drop * 100:.1f} points"  # type: ignore[operator]
    assert view["headline"]["verdict"] == decision.verdict
    deltas = {r["cells"][0]["text"]: [c["text"] for c in r["cells"][1:]] for r in view["grids"][1]["rows"]}
    assert deltas["agent input tokens"] == ["unknown", "5 tokens", "unknown"]
    assert deltas["turn time"] == ["0.25 s", "0.25 s", "±0.00 s"]


def test_the_comparison_page_without_a_baseline_says_so() -> None:
    now, _ = summed({"a": [True]})
    comparison = Compared(now, NoBaseline(why="no earlier run")).comparison()
    view = data(ComparisonPage(comparison, Gate().decision(comparison)).html())
    tiles = {tile["label"]: tile for tile in view["tiles"]}
    assert tiles["Baseline"] == {
        "label": "Baseline",
        "value": "none",
        "note": "no earlier run",
        "tone": "note",
    }


def test_the_index_lists_runs_newest_first_with_relative_links_and_a_trend_per_agent() -> None:
    old, _ = summed({"x": [True, False]}, folder="results/a/20261101T000000Z-aaaa")
    new, _ = summed({"x": [True, True]}, folder="results/javascript:alert(1)/20261102T000000Z-b b")
    old = msgspec.structs.replace(old, started="2026-11-01T00:00:00Z")
    new = msgspec.structs.replace(new, started="2026-11-02T00:00:00Z")
    view = data(Index((new, old)).html())
    links = [r["cells"][1]["link"] for r in view["grids"][0]["rows"]]
    assert links == [
        "javascript%3Aalert%281%29/20261102T000000Z-b%20b/report.html",
        "a/20261101T000000Z-aaaa/report.html",
    ]
    (trend,) = view["charts"]
    assert [p["text"] for p in trend["points"]] == [old.rate.text(), new.rate.text()]


def test_a_big_run_makes_a_page_of_reasonable_size() -> None:
    scenarios = {f"scenario-{n}": [n % 3 != 0] * 100 for n in range(100)}
    answer = "Your order **4411** shipped on 2 November.\n\n- tracking: `ZX-1`\n- arrives Friday"
    summary, outcomes = summed(scenarios, answer=answer, usage=Usage(input=40, output=30))
    page = Report(summary, outcomes).html()
    assert len(page) < 40_000_000
    assert len(data(page)["windows"]) == 100


def test_an_agent_failure_is_counted_and_shown_with_its_detail() -> None:
    summary, outcomes = summed({"x": [True, True]})
    broken = msgspec.structs.replace(
        outcomes[1], decision=Failed(reason="http_500", detail="upstream said no")
    )
    summary = Summed(
        RunFile(
            format=1,
            spec=RunSpec(agent="a", repeat=2, scenarios=(ScenarioEntry(name="x", fingerprint="f"),)),
            status="interrupted",
            started="t",
        ),
        "r/a/1",
        [outcomes[0], broken],
    ).summary()
    view = data(Report(summary, [outcomes[0], broken]).html())
    tiles = {tile["label"]: tile for tile in view["tiles"]}
    assert (tiles["Agent failures"]["value"], tiles["Agent failures"]["note"]) == ("1", "http_500 × 1")
    assert tiles["Agent failures"]["tone"] == "bad"
    shown = view["windows"][0]["attempts"][1]
    assert (shown["outcome"], shown["detail"], shown["open"]) == (
        "the agent failed: http_500",
        "upstream said no",
        True,
    )
    assert view["notices"] == [
        "The run is interrupted: 2 of 2 attempts were played; the figures are of those."
    ]


def test_a_demo_run_writes_a_standalone_report(tmp_path: Path) -> None:
    played = subprocess.run(
        [sys.executable, "-m", "convy", "run", "--demo"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert played.returncode in (0, 1), played.stderr
    (page,) = tmp_path.glob("results/support/*/report.html")
    html = page.read_text(encoding="utf-8")
    view = data(html)
    assert [row["cells"][0]["text"] for row in view["grids"][0]["rows"]] == [
        "cancel-subscription",
        "order-status",
        "refund-late-order",
        "talk-to-human",
    ]
    assert all(len(window["attempts"]) == 3 for window in view["windows"])
    assert view["headline"]["verdict"] in ("pass", "fail")
    assert re.findall(r"https?:", outside(html).replace(SVG_NAMESPACE, "")) == []


def test_a_window_shows_at_most_twenty_attempts_those_that_did_not_hold_first() -> None:
    results: list[bool | None] = [True] * 50
    for index in (7, 30, 44):
        results[index] = False
    summary, outcomes = summed({"big": results})
    window = data(Report(summary, outcomes).html())["windows"][0]
    titles = [a["title"] for a in window["attempts"]]
    assert len(titles) == 20
    assert {"Attempt 8", "Attempt 31", "Attempt 45"} <= set(titles)
    assert any("showing 20 of 50 attempts" in fact for fact in window["facts"])


def test_an_attempt_without_verdict_shows_the_status_and_the_judge_s_raw_reply() -> None:
    from convy.draw.transcript import Attempt as ShownAttempt
    from convy.play.outcome import NoVerdict, Outcome

    outcome = Outcome(
        scenario="s",
        index=0,
        fingerprint="f",
        turns=(),
        seconds=1.0,
        decision=NoVerdict(
            reason="judge_unreadable",
            detail="judge: the judge's reply could not be read, asked twice",
            status=0,
            raw='{"decisions": [{"pass": "maybe"',
        ),
    )
    view = ShownAttempt(outcome, AgentMarkdown(MarkdownIt("commonmark", {"html": False}))).view()
    assert '{"decisions": [{"pass": "maybe"' in view.detail
    failed = msgspec.structs.replace(
        outcome,
        decision=NoVerdict(reason="judge_failure", detail="judge: boom", status=404, message="no model"),
    )
    assert (
        "(HTTP 404)"
        in ShownAttempt(failed, AgentMarkdown(MarkdownIt("commonmark", {"html": False}))).view().detail
    )
