"""Why it changed (docs/comment.md): comparison.html shows, for a scenario that changed, a baseline
attempt beside one of this run — for a drop one that held beside one that did not, for a rise the
reverse, each the lowest index that qualifies — turn by turn, the first turn whose answers differ
marked, the changed words inside `<del>`/`<ins>`, each side's decision under it; none for a scenario
unchanged; agent text escaped in it. Also through `convy run`/`compare` on real run folders, where a
re-judged baseline shows the decisions the comparison used."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from convy.compare.comparison import Compared
from convy.compare.gate import Gate
from convy.draw.anchor import Anchor
from convy.draw.links import Links
from convy.draw.report import ComparisonPage
from convy.draw.worddiff import TOKENS, Leaves, WordDiff
from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.command import convy
from tests.support.html import Node, parsed
from tests.support.rejudged import played, project, runs
from tests.support.side_by_side import (
    BEFORE,
    CLAIM,
    CREDITED,
    GOOD,
    NOW,
    REFUNDED,
    page,
    run,
)


def block(html: str, name: str) -> Node:
    return parsed(html).by_id(Anchor(name).diff())


def marks(node: Node, tag: str) -> list[str]:
    return [n.text() for n in node.all(tag)]


def test_a_regressed_scenario_shows_a_held_baseline_attempt_beside_a_failing_one() -> None:
    html, statuses = page(BEFORE, NOW)
    assert statuses == {"refund-late-order": "regressed", "order-status": "unchanged"}
    diff = block(html, "refund-late-order")
    assert diff.tag == "details" and "diff" in diff.classes()
    before, after = diff.all("div", "head")
    assert "Attempt 2" in before.text() and "held" in before.text() and "did not hold" not in before.text()
    assert "Attempt 3" in after.text() and "did not hold" in after.text(), (
        "the first judged that did not hold"
    )
    assert "20261201T100000Z-aaaa" in before.text() and "20261202T100000Z-bbbb" in after.text()
    turns = [n for n in diff.all("div", "turn-pair") if n.attributes.get("data-turn")]
    assert [t.attributes["data-turn"] for t in turns] == ["1", "2", "3"]
    assert [("first-difference" in t.classes()) for t in turns] == [False, True, False]
    assert "first difference" in turns[1].all("div", "turn-head")[0].text()
    assert marks(turns[0], "del") == marks(turns[0], "ins") == marks(turns[2], "del") == []
    assert marks(turns[1], "del") == ["a full refund", "card."]
    assert marks(turns[1], "ins") == ["store credit", "account."]
    old, new = turns[1].all("div", "cell")
    assert old.all("del") and not old.all("ins") and new.all("ins") and not new.all("del")
    assert old.all("div", "agent")[0].text() == "agent" + REFUNDED, "the words and blanks as they were"
    assert new.all("div", "agent")[0].text() == "agent" + CREDITED
    decisions = diff.all("div", "decision")
    assert "held" in decisions[0].text() and CLAIM not in decisions[0].text()
    assert CLAIM in decisions[1].text() and "It offers store credit, not a refund." in decisions[1].text()
    assert not diff.all("p", "notice"), "both sides qualify: nothing to say"


def test_an_unchanged_scenario_has_no_block_and_the_table_links_the_changed_one_to_its_block() -> None:
    html, _ = page(BEFORE, NOW)
    ids = {n.attributes.get("id") for n in parsed(html).all()}
    assert Anchor("order-status").diff() not in ids and Anchor("refund-late-order").diff() in ids
    rows = {r.all("td")[0].text(): r for r in parsed(html).by_id("scenarios").all("tr") if r.all("td")}
    assert (
        rows["refund-late-order"].all("a")[0].attributes["href"] == "#" + Anchor("refund-late-order").diff()
    )
    assert not rows["order-status"].all("a")
    same, _ = page({"order-status": [(True, GOOD)] * 5}, {"order-status": [(True, GOOD)] * 5})
    assert 'class="differences"' not in same and 'id="diff-' not in same


def test_a_rise_shows_a_baseline_attempt_that_did_not_hold_beside_one_that_did() -> None:
    html, statuses = page(NOW, BEFORE)
    assert statuses["refund-late-order"] == "improved"
    before, after = block(html, "refund-late-order").all("div", "head")
    assert "Attempt 3" in before.text() and "did not hold" in before.text()
    assert "Attempt 2" in after.text() and "did not hold" not in after.text()
    diff = block(html, "refund-late-order")
    assert marks(diff, "del") == ["store credit", "account."] and marks(diff, "ins") == [
        "a full refund",
        "card.",
    ]


def test_where_no_attempt_qualifies_the_closest_is_shown_and_the_block_says_so() -> None:
    held = [(True, GOOD)] * 3
    html, statuses = page({"x": held}, {"x": held}, rejudged=frozenset({"x"}))
    assert statuses["x"] == "rejudged"
    diff = block(html, "x")
    notes = [n.text() for n in diff.all("p", "notice")]
    assert notes == ["Every judged attempt of this run held: the closest is shown."]
    assert not [t for t in diff.all("div", "turn-pair") if "differs" in t.classes()]
    assert not diff.all("del") and not diff.all("ins")
    fewer, _ = page({"x": [(True, GOOD)] * 5}, {"x": [(False, GOOD[:1])] * 5})
    turns = [n for n in block(fewer, "x").all("div", "turn-pair") if n.attributes.get("data-turn")]
    assert [("first-difference" in t.classes()) for t in turns] == [False, True, False]
    assert [len(t.all("div", "missing")) for t in turns] == [0, 1, 1], "a shorter side shows empty cells"


def test_agent_text_stays_escaped_and_markdown_rendered_inside_the_diff() -> None:
    hostile = "**Refund** <script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3))"
    changed = "**Credit** <script>alert(1)</script> <img src=x onerror=alert(4)> [x](javascript:alert(3))"
    html, _ = page(
        {"x": [(True, (hostile,))] * 5, "y": [(True, (hostile,))] * 5},
        {"x": [(False, (changed,))] * 5, "y": [(True, (hostile,))] * 5},
    )
    tree = parsed(html)
    assert len(tree.all("script")) == 1 and not tree.all("img"), "only the page's own script"
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    diff = block(html, "x")
    assert [n.text() for n in diff.all("strong")] == ["Refund", "Credit"]
    assert [n.text() for n in diff.all("strong")[0].all("del")] == ["Refund"]
    assert marks(diff, "del") == ["Refund", "onerror=alert(2)>"]
    assert marks(diff, "ins") == ["Credit", "onerror=alert(4)>"]
    hrefs = {a.attributes.get("href") or "" for a in tree.all("a")}
    assert all(h.startswith("#diff-scenario-") or h == "report.html" for h in hrefs), hrefs


def test_the_word_diff_keeps_every_blank_and_marks_only_changed_words() -> None:
    before: list[object] = [["p", "one  two\nthree four"], ["pre", "code a"]]
    after: list[object] = [["p", "one  TWO\nthree four five"], ["pre", "code b"]]
    old, new = WordDiff(before, after).marked()
    assert old == [["p", "one  ", ["del", "two"], "\nthree four"], ["pre", "code ", ["del", "a"]]]
    assert new == [
        ["p", "one  ", ["ins", "TWO"], "\nthree four ", ["ins", "five"]],
        ["pre", "code ", ["ins", "b"]],
    ]
    assert "".join(TOKENS.findall("a  b\n c")) == "a  b\n c"
    assert Leaves(old).tokens() == Leaves(before).tokens()
    long = [["p", "w " * 5000]]
    gone, added = WordDiff(long, [["p", "v " * 5000]]).marked()
    assert gone == [["p", ["del", ("w " * 5000).rstrip()], " "]], "too long to compare: marked whole"
    assert added == [["p", ["ins", ("v " * 5000).rstrip()], " "]]


def test_a_comparison_page_link_goes_to_the_block_only_when_the_page_was_uploaded() -> None:
    anchor = Anchor("refund-late-order").id()
    pages = Links(report_page="https://x.example/12", comparison_page="https://x.example/13")
    assert pages.difference(anchor) == f"https://x.example/13#diff-{anchor}"
    assert pages.scenario(anchor) == f"https://x.example/12#{anchor}"
    assert Links(report_page="https://x.example/12").difference(anchor) == f"https://x.example/12#{anchor}"
    assert Links(report="https://x.example/11").difference(anchor) == "https://x.example/11"
    assert Links().difference(anchor) == ""


def strict(request: dict[str, Any]) -> str:
    """A judge that holds every claim but the polite one."""
    text = request["messages"][-1]["content"]
    claims = [line for line in text.splitlines() if line[:3] in ("1. ", "2. ", "3. ")]
    decisions = [
        {"pass": "politely" not in line, "reason": "rude" if "politely" in line else "fine"}
        for line in claims or ["1. "]
    ]
    return json.dumps({"decisions": decisions})


def test_the_written_comparison_shows_a_rejudged_baseline_with_the_decisions_the_comparison_used(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path, "turns: [hello, again]\nclaims: [The agent answers.]\n")
    with AgentServer() as agent, ModelServer(strict) as models:
        first = played(folder, agent, models)
        assert first.returncode == 0, first.stderr
        (baseline,) = runs(folder)
        project(folder, "turns: [hello, again]\nclaims: [The agent answers politely.]\n")
        second = played(folder, agent, models, "--baseline", str(baseline))
    assert "rejudged" in second.stdout, second.stdout + second.stderr
    now = next(p for p in runs(folder) if p != baseline)
    diff = parsed((now / "comparison.html").read_text(encoding="utf-8")).by_id(Anchor("greet").diff())
    old, new = diff.all("div", "decision")
    assert "The agent answers politely." in old.text() and "rude" in old.text(), "the re-judged decision"
    assert "The agent answers politely." in new.text()
    assert "judged again" in diff.text()
    (now / "comparison.html").unlink()
    later = convy("compare", str(now), str(baseline), cwd=folder)
    assert "rejudged" in later.stdout, later.stderr
    again = parsed((now / "comparison.html").read_text(encoding="utf-8")).by_id(Anchor("greet").diff())
    assert "rude" in again.all("div", "decision")[0].text()


def test_each_side_links_its_attempt_to_its_trace() -> None:
    from convy.draw.links import TraceLink
    from convy.project.traceurl import TraceUrl

    old, old_outcomes = run(BEFORE, "results/support/20261201T100000Z-aaaa")
    new, new_outcomes = run(NOW, "results/support/20261202T100000Z-bbbb")
    old_outcomes = [msgspec.structs.replace(o, trace_id=f"{o.index:032x}") for o in old_outcomes]
    new_outcomes = [msgspec.structs.replace(o, trace_id=f"{o.index + 16:032x}") for o in new_outcomes]
    comparison = Compared(new, old).comparison()
    trace = TraceLink(TraceUrl("https://t.example/traces/{trace_id}").checked())
    html = ComparisonPage(
        comparison, Gate().decision(comparison), iter(new_outcomes), iter(old_outcomes), trace
    ).html()
    before, after = block(html, "refund-late-order").all("div", "head")
    assert [a.attributes["href"] for a in before.all("a")] == [f"https://t.example/traces/{1:032x}"]
    assert [a.attributes["href"] for a in after.all("a")] == [f"https://t.example/traces/{2 + 16:032x}"]
    plain = ComparisonPage(comparison, Gate().decision(comparison), iter(new_outcomes), iter(old_outcomes))
    assert "t.example" not in plain.html(), "no trace-url: no link"
