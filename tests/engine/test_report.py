"""The pages as files: standalone (no reference outside the page), static HTML that shows what the
model computed (a row per scenario, `unknown` for what nobody reported) and every scenario's window
without a script, agent text escaped, an agent's Markdown as a tree of text, a check's result said to
be a check's, and a size that stays reasonable for big runs."""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from markdown_it import MarkdownIt

from convy.compare.comparison import Compared, NoBaseline
from convy.compare.gate import Gate, GateDecision
from convy.compare.summary import Summary, Summed
from convy.draw.amount import Amount
from convy.draw.anchor import Anchor
from convy.draw.report import ComparisonPage, Index, Report
from convy.draw.transcript import LIMIT, AgentMarkdown
from convy.play.agent import Usage
from convy.play.outcome import ClaimResult, Failed, NoVerdict, Outcome
from convy.store.runfile import RunFile, RunSpec, ScenarioEntry
from tests.support.html import Node, parsed
from tests.support.outcomes import outcome

BREAKOUT = "</script><script>alert(1)</script>"
SVG_NAMESPACE = "http://www.w3.org/2000/svg"


def rows(page: Node, grid: str = "scenarios") -> list[Node]:
    return [r for r in page.by_id(grid).all("tr") if r.all("td") and "empty" not in r.classes()]


def cells(row: Node) -> list[str]:
    return [td.text() for td in row.all("td")]


def tiles(page: Node) -> dict[str, tuple[str, str]]:
    return {
        t.all("div", "label")[0].text(): (t.all("div", "value")[0].text(), t.text())
        for t in page.all("div", "tile")
    }


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
    markup = re.sub(r"<(script|style)>.*?</\1>", "", page, flags=re.DOTALL)
    addresses = re.findall(r"""(?:src|href|action|srcset)\s*=\s*["']?([^"'\s>]*)""", markup, re.IGNORECASE)
    assert addresses and all(a.startswith("data:") or not re.match(r"[a-z+.-]+:", a) for a in addresses)
    assert not [a for a in addresses if a.startswith(("//", "/"))], addresses
    assert re.findall(r"url\(|@import", page) == []
    assert "https://e.example" not in "".join(addresses)


@pytest.mark.parametrize("page", list(pages()), ids=["report", "comparison", "index"])
def test_the_policy_allows_no_request_and_only_the_pages_own_script_and_style(page: str) -> None:
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    rules = dict(rule.strip().split(" ", 1) for rule in policy.group(1).split(";"))
    assert rules["default-src"] == "'none'" and rules["img-src"] == "data:"
    script = re.findall(r"<script>(.*?)</script>", page, re.DOTALL)
    style = re.findall(r"<style>(.*?)</style>", page, re.DOTALL)
    assert len(script) == 1 and len(style) == 1 and " style=" not in page
    for source, rule in ((script[0], "script-src"), (style[0], "style-src")):
        digest = base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()
        assert rules[rule] == f"'sha256-{digest}'"
    assert "innerHTML" not in script[0] and "insertAdjacentHTML" not in script[0]


def test_the_report_has_one_row_per_scenario_in_declaration_order_and_a_window_each() -> None:
    summary, outcomes = summed({"b": [True, False], "a": [True, True], "c": [None, None]})
    page = parsed(Report(summary, reversed(outcomes)).html())
    shown = rows(page)
    assert [cells(r)[0] for r in shown] == ["b", "a", "c"]
    assert [r.attributes["data-status"] for r in shown] == ["flaky", "passing", "unjudged"]
    anchors = [r.attributes["data-anchor"] for r in shown]
    assert anchors == [Anchor(n).id() for n in "bac"]
    assert [r.all("a")[0].attributes["href"] for r in shown] == [f"#{a}" for a in anchors]
    windows = page.all("details", "window")
    assert [w.attributes["id"] for w in windows] == anchors
    assert [w.all("span", "name")[0].text() for w in windows] == ["b", "a", "c"]
    attempts = windows[0].all("details", "attempt")
    assert [a.all("span", "title")[0].text() for a in attempts] == ["Attempt 1", "Attempt 2"]
    assert [a.all("span", "pill")[0].text() for a in attempts] == ["held", "did not hold"]
    assert [("open" in a.attributes) for a in attempts] == [False, True]
    assert windows[2].all("span", "pill")[1].text() == "no verdict: model_failure"
    assert page.all("section", "headline") == []


def test_every_table_cell_is_labelled_by_its_column_for_a_narrow_screen() -> None:
    summary, outcomes = summed({"x": [True, False]})
    html = Report(summary, outcomes).html()
    page = parsed(html)
    for table in page.all("table"):
        assert "cards" in table.classes()
        columns = [th.text() for th in table.all("th")]
        for row in table.all("tr"):
            if row.all("td") and "empty" not in row.classes():
                assert [td.attributes["data-label"] for td in row.all("td")] == columns
    assert re.search(
        r"@media \(max-width: 640px\)[^@]*table\.cards td::before \{\s*content: attr\(data-label\)", html
    )
    assert "details:is(.window, .diff):target::details-content { content-visibility: visible; }" in html


def test_the_figures_are_the_models_own() -> None:
    summary, outcomes = summed({"x": [True, True, False, None]})
    page = parsed(Report(summary, outcomes).html())
    shown = tiles(page)
    assert shown["Pass rate"][0] == f"{summary.rate.value * 100:.1f}%"  # type: ignore[union-attr]
    assert "2 of 3 judged held" in shown["Pass rate"][1]
    assert shown["Without verdict"][0] == f"{summary.no_verdict_attempts}" == "1"
    assert "25.0% of attempts · model_failure × 1" in shown["Without verdict"][1]
    assert shown["Agent failures"][0] == "0" and shown["Agent failures"][1].endswith("none")
    assert shown["pass^4, mean over scenarios"][0] == summary.pass_k.text()
    assert cells(rows(page)[0])[2] == summary.scenarios[0].rate.text()


def test_numbers_nobody_reported_show_unknown() -> None:
    summary, outcomes = summed({"x": [None, None]})
    page = parsed(Report(summary, outcomes).html())
    shown = tiles(page)
    assert shown["Pass rate"][0] == "unknown"
    assert shown["Agent tokens per attempt, median"][0] == "unknown"
    assert shown["Model tokens per attempt, median"][0] == "user unknown"
    row = cells(rows(page)[0])
    assert (row[2], row[4]) == ("unknown", "unknown")
    turn = page.all("div", "turn")[0]
    assert "agent tokens unknown" in [li.text() for li in turn.all("li")]
    bars = page.all("figure", "chart-bars")[0]
    assert bars.all("rect") == [] and bars.all("span", "value")[0].text() == "unknown"
    assert Amount(value=None, unit="s").text() == "unknown" and Amount(value=None).signed() == "unknown"


def test_a_token_count_reported_in_part_is_unknown_in_that_part() -> None:
    summary, outcomes = summed({"x": [True]}, usage=Usage(input=12))
    turn = parsed(Report(summary, outcomes).html()).all("div", "turn")[0]
    assert "agent tokens 12 in · unknown out" in [li.text() for li in turn.all("li")]


def test_a_script_in_agent_text_is_escaped_text() -> None:
    answer = f"Sure. {BREAKOUT} <img src=x onerror=alert(2)> \u2028 & done"
    summary, outcomes = summed({"x": [True]}, answer=answer)
    html = Report(summary, outcomes).html()
    assert html.count("<script") == 1 and html.count("</script>") == 1 and "<img" not in html
    said = parsed(html).all("div", "markdown")[0]
    assert [n.tag for n in said.all()] == ["p"] and said.text() == answer


def test_a_scenario_name_is_text_too() -> None:
    summary, outcomes = summed({"<script>alert(3)</script>": [True]})
    html = Report(summary, outcomes).html()
    assert "<script>alert(3)" not in html and "&lt;script&gt;alert(3)&lt;/script&gt;" in html
    assert cells(rows(parsed(html))[0])[0] == "<script>alert(3)</script>"


def test_a_check_s_result_is_said_to_be_a_check_s_and_a_claim_s_the_judge_s() -> None:
    summary, outcomes = summed({"x": [False, False]})
    failing = msgspec.structs.replace(
        outcomes[0].decision,  # type: ignore[arg-type]
        claims=(ClaimResult(claim="contains 'refund'", passed=False, reason="no answer has it", check=True),),
    )
    outcomes = [msgspec.structs.replace(outcomes[0], decision=failing), outcomes[1]]
    summary = Summed(
        RunFile(
            format=1,
            spec=RunSpec(agent="a", repeat=2, scenarios=(ScenarioEntry(name="x", fingerprint="f"),)),
            status="finished",
            started="t",
        ),
        "r/a/1",
        outcomes,
    ).summary()
    page = parsed(Report(summary, outcomes).html())
    reasons = [c.all("div", "reason")[0].text() for c in page.all("div", "claim")]
    assert reasons == ["check: no answer has it", "judge: Seen."]
    claims = page.all("details", "attempt")[0].all("table", "claims")[0]
    assert [cells(r)[2] for r in claims.all("tr") if r.all("td")] == ["check: no answer has it"]
    assert cells(rows(page, "parties")[0])[3] == "check: no answer has it"


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
    said = parsed(Report(summary, outcomes).html()).all("div", "markdown")[0]
    paragraphs = said.all("p")
    assert len(paragraphs[0].text()) <= LIMIT
    assert paragraphs[-1].all("em")[0].text() == (
        f"[cut: the first {LIMIT:,} of {LIMIT // 2 * 5:,} characters are shown]"
    )


def test_the_report_streams_its_outcomes_once() -> None:
    summary, outcomes = summed({"x": [True, False]})
    consumed: list[int] = []

    def stream() -> Iterator[Outcome]:
        for o in outcomes:
            consumed.append(o.index)
            yield o

    page = parsed(Report(summary, stream()).html())
    assert consumed == [0, 1] and len(page.all("details", "attempt")) == 2


def test_the_gates_decision_is_the_headline() -> None:
    summary, outcomes = summed({"x": [True]})
    decision = GateDecision(
        verdict="fail", rule="min-pass-rate", explanation="pass rate 10.0% is under 50.0%"
    )
    (headline,) = parsed(Report(summary, outcomes, decision).html()).all("section", "headline")
    assert "tone-bad" in headline.classes()
    assert [d.text() for d in headline.all("div")] == [
        "fail",
        "rule: min-pass-rate",
        "pass rate 10.0% is under 50.0%",
    ]


def test_the_comparison_page_shows_statuses_regressions_first_and_deltas() -> None:
    before, _ = summed(
        {"a": [True] * 6, "b": [True, False] * 3, "gone": [True] * 6}, usage=Usage(input=5, output=5)
    )
    now, _ = summed({"a": [False] * 6, "b": [True] * 6, "new": [True] * 6})
    comparison = Compared(now, before).comparison()
    decision = Gate().decision(comparison)
    page = parsed(ComparisonPage(comparison, decision).html())
    shown = rows(page)
    assert [
        (cells(r)[0], r.attributes["data-status"], r.all("span", "pill")[0].classes()) for r in shown
    ] == [
        ("a", "regressed", {"pill", "tone-bad"}),
        ("new", "new", {"pill", "tone-note"}),
        ("gone", "removed", {"pill", "tone-note"}),
        ("b", "higher", {"pill", "tone-plain"}),
    ]
    assert cells(shown[0])[4] == comparison.scenarios[0].p.text()
    assert tiles(page)["Change on common scenarios"][0] == f"−{comparison.drop * 100:.1f} points"  # type: ignore[operator]
    assert page.all("div", "verdict")[0].text() == decision.verdict
    deltas = {cells(r)[0]: cells(r)[1:] for r in rows(page, "deltas")}
    assert deltas["agent input tokens"] == ["unknown", "5 tokens", "unknown"]
    assert deltas["turn time"] == ["0.25 s", "0.25 s", "±0.00 s"]


def test_the_comparison_page_without_a_baseline_says_so() -> None:
    now, _ = summed({"a": [True]})
    comparison = Compared(now, NoBaseline(why="no earlier run")).comparison()
    page = parsed(ComparisonPage(comparison, Gate().decision(comparison)).html())
    (tile,) = [t for t in page.all("div", "tile") if t.all("div", "label")[0].text() == "Baseline"]
    assert "tone-note" in tile.classes()
    assert [d.text() for d in tile.all("div")] == ["Baseline", "none", "no earlier run"]


def test_the_index_lists_runs_newest_first_with_relative_links_and_a_trend_per_agent() -> None:
    old, _ = summed({"x": [True, False]}, folder="results/a/20261101T000000Z-aaaa")
    new, _ = summed({"x": [True, True]}, folder="results/javascript:alert(1)/20261102T000000Z-b b")
    old = msgspec.structs.replace(old, started="2026-11-01T00:00:00Z")
    new = msgspec.structs.replace(new, started="2026-11-02T00:00:00Z")
    page = parsed(Index((new, old)).html())
    links = [r.all("a")[0].attributes["href"] for r in rows(page, "runs")]
    assert links == [
        "javascript%3Aalert%281%29/20261102T000000Z-b%20b/report.html",
        "a/20261101T000000Z-aaaa/report.html",
    ]
    (trend,) = page.all("figure", "chart")
    titles = [t.text() for t in trend.all("circle", "point")]
    assert titles == [f"{old.run}: {old.rate.text()}", f"{new.run}: {new.rate.text()}"]


def test_a_big_run_makes_a_page_of_reasonable_size() -> None:
    scenarios = {f"scenario-{n}": [n % 3 != 0] * 100 for n in range(100)}
    answer = "Your order **4411** shipped on 2 November.\n\n- tracking: `ZX-1`\n- arrives Friday"
    summary, outcomes = summed(scenarios, answer=answer, usage=Usage(input=40, output=30))
    html = Report(summary, outcomes).html()
    assert len(html) < 40_000_000
    assert html.count('<details class="window ') == 100


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
    page = parsed(Report(summary, [outcomes[0], broken]).html())
    (failures,) = [t for t in page.all("div", "tile") if t.all("div", "label")[0].text() == "Agent failures"]
    assert [d.text() for d in failures.all("div")[1:]] == ["1", "http_500 × 1"]
    assert "tone-bad" in failures.classes()
    shown = page.all("details", "attempt")[1]
    assert shown.all("span", "pill")[0].text() == "the agent failed: http_500"
    assert shown.all("pre", "detail")[0].text() == "upstream said no" and "open" in shown.attributes
    assert [p.text() for p in page.all("p", "notice")] == [
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
    (file,) = tmp_path.glob("results/support/*/report.html")
    html = file.read_text(encoding="utf-8")
    page = parsed(html)
    names = ["cancel-subscription", "order-status", "refund-late-order", "talk-to-human"]
    assert [cells(r)[0] for r in rows(page)] == names
    assert all(len(w.all("details", "attempt")) == 3 for w in page.all("details", "window"))
    assert page.all("div", "verdict")[0].text() in ("pass", "fail")
    assert re.findall(r"""(?:href|src)="https?:""", html) == []


def test_a_window_shows_at_most_twenty_attempts_those_that_did_not_hold_first() -> None:
    results: list[bool | None] = [True] * 50
    for index in (7, 30, 44):
        results[index] = False
    summary, outcomes = summed({"big": results})
    window = parsed(Report(summary, outcomes).html()).all("details", "window")[0]
    titles = [a.all("span", "title")[0].text() for a in window.all("details", "attempt")]
    assert len(titles) == 20
    assert {"Attempt 8", "Attempt 31", "Attempt 45"} <= set(titles)
    assert any("showing 20 of 50 attempts" in li.text() for li in window.all("li"))


def test_an_attempt_without_verdict_shows_the_status_and_the_judge_s_raw_reply() -> None:
    from convy.draw.transcript import ShownAttempt

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
    markdown = AgentMarkdown(MarkdownIt("commonmark", {"html": False}))
    assert '{"decisions": [{"pass": "maybe"' in ShownAttempt(outcome, markdown).view().detail
    failed = msgspec.structs.replace(
        outcome,
        decision=NoVerdict(reason="judge_failure", detail="judge: boom", status=404, message="no model"),
    )
    assert "(HTTP 404)" in ShownAttempt(failed, markdown).view().detail
