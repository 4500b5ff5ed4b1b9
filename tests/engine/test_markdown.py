"""The pull request's comment, parsed as GitHub would: its marker, headline, tables and links; agent
text that cannot act; and a body under GitHub's limit however many scenarios and however long the
judge's reasons."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from convy.compare.comparison import Compared, Comparison, NoBaseline
from convy.compare.gate import Gate, GateDecision
from convy.compare.statistics import Share, Unknown
from convy.compare.summary import Summary, Summed
from convy.draw.markdown import CommentMarkdown, Links, Marker
from convy.play.agent import Usage
from convy.play.outcome import ClaimResult, Failed, NoVerdict, Outcome, Turn, Verdict
from convy.store.journal import RunFile, RunSpec, ScenarioEntry, Status

MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])

Attempt = bool | None | str
"""An attempt: it held or not (a verdict), None (no verdict), or the reason the agent failed."""

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "</details>",
    "</details>\n\n<script>alert(2)</script>\n\n<details>",
    "@org/team",
    "![](http://x)",
    "[a](javascript:alert(1))",
    "see https://evil.example/a|b",
    "a | b | c",
    "line\n\n# heading\n- item\n| x | y |\n|---|---|",
    "-->",
    "\x1b[31mred\x1b[0m",
    "y" * 100_000,
    "<" * 100_000,
]


def attempt(scenario: str, index: int, held: Attempt, claim: str, reason: str) -> Outcome:
    decision: Verdict | Failed | NoVerdict
    match held:
        case None:
            decision = NoVerdict(reason="model_failure")
        case str(failure):
            decision = Failed(reason=failure)
        case bool(holds):
            claims = (
                ClaimResult(claim="The agent greets the user.", passed=True, reason="it did"),
                ClaimResult(claim=claim, passed=holds, reason="" if holds else reason),
            )
            decision = Verdict(holds=holds, claims=claims)
    turn = Turn(user="u", agent="a", seconds=0.5, usage=Usage(input=100, output=40))
    return Outcome(
        scenario=scenario, index=index, fingerprint="f", turns=(turn,), seconds=2.0 + index, decision=decision
    )


def run(
    results: dict[str, list[Attempt]],
    *,
    agent: str = "support",
    claim: str = "The agent asks for the order number.",
    reason: str = "It never asked for the order number.",
    status: Status = "finished",
) -> Summary:
    repeat = max(len(v) for v in results.values())
    spec = RunSpec(
        agent=agent,
        repeat=repeat,
        scenarios=tuple(ScenarioEntry(name=n, fingerprint="f", line=1, claim_lines=(3, 4)) for n in results),
    )
    outcomes = [attempt(n, i, h, claim, reason) for n, hs in results.items() for i, h in enumerate(hs)]
    file = RunFile(format=1, spec=spec, status=status, started="t")
    return Summed(file, "results/support/r1", outcomes).summary()


def judged(
    now: Summary, baseline: Summary | NoBaseline, gate: Gate | None = None
) -> tuple[Comparison, GateDecision]:
    gate = gate or Gate()
    comparison = Compared(now, baseline, gate.alpha).comparison()
    return comparison, gate.decision(comparison)


def comment(now: Summary, baseline: Summary | NoBaseline, gate: Gate | None = None, **options: object) -> str:
    comparison, decision = judged(now, baseline, gate)
    return CommentMarkdown(comparison, decision, **options).text()  # type: ignore[arg-type]


def flat(tokens: list[Token]) -> list[Token]:
    every: list[Token] = []
    for token in tokens:
        every.append(token)
        every.extend(flat(token.children or []))
    return every


def tables(text: str) -> list[list[int]]:
    """Each table of the parsed text as the number of cells in each of its rows (header first)."""
    found: list[list[int]] = []
    for token in MARKDOWN.parse(text):
        if token.type == "table_open":
            found.append([])
        elif token.type == "tr_open":
            found[-1].append(0)
        elif token.type in ("th_open", "td_open"):
            found[-1][-1] += 1
    return found


def ours(text: str) -> set[str]:
    """The HTML the comment itself may hold: its marker and the collapsed section."""
    return {text.split("\n", 1)[0], "</details>"} | set(
        re.findall(r"<details><summary>All [0-9,]+ scenarios</summary>", text)
    )


def assert_inert(text: str) -> None:
    tokens = flat(MARKDOWN.parse(text))
    allowed = ours(text)
    for token in tokens:
        if token.type in ("html_inline", "html_block"):
            assert token.content.strip() in allowed, token.content
        assert token.type not in ("link_open", "image", "autolink"), token
    assert text.count("<details>") == 1 and text.count("</details>") == 1
    for table in tables(text):
        assert len(set(table)) == 1, f"a row has an extra or missing cell: {table}"


A_DROP = (
    run({"refund": [True, False, False], "address": [True, True, True], "greet": [True, True, True]}),
    run({"refund": [True, True, True], "address": [True, True, True], "greet": [True, True, True]}),
)


def test_the_first_line_is_the_marker_and_the_agent_name_cannot_break_it() -> None:
    text = comment(*A_DROP)
    assert text.split("\n", 1)[0] == "<!-- convy-action:support -->"
    hostile = run({"s": [True]}, agent="x-->y<!--z>\n@all")
    first = comment(hostile, NoBaseline()).split("\n", 1)[0]
    assert first == Marker(agent="x-->y<!--z>\n@all").text() == "<!-- convy-action:x-_y_-z_all -->"
    block = MARKDOWN.parse(comment(hostile, NoBaseline()))[0]
    assert block.type == "html_block" and block.content == first + "\n"


def test_the_tables_have_a_row_for_each_figure_regression_and_scenario() -> None:
    before = run(
        {
            "refund": [True] * 5,
            "address": [True] * 5,
            "greet": [True] * 5,
            "gone": [True] * 5,
            "same": [True] * 5,
        }
    )
    now = run(
        {
            "refund": [True, False, False, False, False],
            "address": [False] * 5,
            "greet": [True] * 5,
            "new": [True] * 5,
            "same": [True] * 5,
        }
    )
    text = comment(now, before)
    key, regressions, every = tables(text)
    assert (len(key), key[0]) == (1 + 12, 4)
    assert (len(regressions), regressions[0]) == (1 + 2, 6)
    assert (len(every), every[0]) == (1 + 6, 5)
    assert "<details><summary>All 6 scenarios</summary>" in text and "### Regressions (2)" in text
    assert "| refund " in text and "| 1/5 " in text and "| 5/5 " in text
    assert "It never asked for the order number." in text and "(4 of 5 failed)" in text
    assert (
        text.index("| regressed ")
        < text.index("| new ")
        < text.index("| removed ")
        < text.index("| unchanged ")
    )


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_agent_text_renders_inert(hostile: str) -> None:
    now = run({hostile: [False] * 5, "other": [True] * 5}, claim=hostile, reason=hostile)
    before = run({hostile: [True] * 5, "other": [True] * 5})
    text = comment(now, before)
    assert_inert(text)
    assert len(text) < 65_536 and "@org" not in text and "\x1b" not in text
    html = MARKDOWN.render(text)
    assert "<script" not in html and "<img" not in html and "<a " not in html
    (_, regressions, every) = tables(text)
    assert len(regressions) == 1 + 1 and len(every) == 1 + 2


def test_hostile_failure_reasons_and_why_render_inert() -> None:
    now = run({"s": ["<img src=x onerror=alert(1)>", "@org/team ![](http://x)", True]})
    text = comment(now, NoBaseline(why="[a](javascript:alert(1)) </details>"))
    assert_inert(text)
    assert "@org" not in text


def test_two_thousand_scenarios_with_long_reasons_stay_under_the_limit() -> None:
    names = [f"scenario-{i:04d}" for i in range(2000)]
    before = run({n: [True] * 5 for n in names})
    now = run({n: [False] * 5 for n in names}, reason="<b>" + "z" * 100_000, claim="c" * 100_000)
    text = comment(now, before)
    assert len(text) < 65_536 and len(text.encode("utf-16-le")) // 2 < 65_536
    assert_inert(text)
    _, regressions, every = tables(text)
    shown = len(regressions) - 2
    more = re.search(r"… ([0-9,]+) more regressions", text)
    assert more and shown > 10 and shown + int(more.group(1).replace(",", "")) == 2000
    rest = re.search(r"… ([0-9,]+) more scenarios", text)
    assert rest and len(every) - 2 + int(rest.group(1).replace(",", "")) == 2000
    assert text.splitlines()[-1].startswith("📄 report artifact")


def test_many_scenarios_show_every_regression_and_as_many_others_as_fit() -> None:
    names = [f"scenario-with-a-rather-long-name-{i:04d}" for i in range(2000)]
    before = run({n: [True] * 5 for n in names})
    now = run({n: [False] * 5 if i < 5 else [True] * 5 for i, n in enumerate(names)})
    text = comment(now, before, limit=20_000)
    assert len(text) < 20_000
    _, regressions, every = tables(text)
    assert len(regressions) == 1 + 5
    more = re.search(r"… ([0-9,]+) more scenarios", text)
    assert more and len(every) - 2 + int(more.group(1).replace(",", "")) == 2000
    assert "📄 report artifact" in text.splitlines()[-1]


def test_the_worst_case_fits_the_smallest_limit() -> None:
    long = "<@x>|" * 20_000
    now = run(
        {long + str(i): [f"{long}{i}", True, False] for i in range(50)}, agent=long, reason=long, claim=long
    )
    links = Links(report="https://example.com/" + "a" * 1900, run="https://example.com/" + "b" * 1900)
    text = comment(now, NoBaseline(why=long), Gate(min_pass_rate=0.9), links=links, limit=16_384)
    assert len(text) < 16_384
    assert_inert_but_links(text, 2)


def assert_inert_but_links(text: str, count: int) -> None:
    tokens = flat(MARKDOWN.parse(text))
    assert sum(t.type == "link_open" for t in tokens) == count
    assert all(t.type != "image" for t in tokens)


def test_links_are_ours_or_placeholders() -> None:
    text = comment(
        *A_DROP,
        links=Links(
            report="https://github.com/o/r/actions/runs/7#artifacts",
            run="https://github.com/o/r/actions/runs/7",
        ),
    )
    hrefs = [t.attrGet("href") for t in flat(MARKDOWN.parse(text)) if t.type == "link_open"]
    assert hrefs == [
        "https://github.com/o/r/actions/runs/7#artifacts",
        "https://github.com/o/r/actions/runs/7",
    ]
    assert "report artifact: not uploaded" in comment(*A_DROP)
    with pytest.raises(ValueError, match="http"):
        Links(report="javascript:alert(1)")
    with pytest.raises(ValueError, match="http"):
        Links(run="https://x.example/a>b")


def test_a_limit_too_small_for_the_headline_is_refused() -> None:
    comparison, decision = judged(*A_DROP)
    with pytest.raises(ValueError, match="limit"):
        CommentMarkdown(comparison, decision, Links(), 1000)


def test_unknown_figures_render_as_unknown() -> None:
    text = comment(*A_DROP)
    assert re.search(r"\| median judge tokens +\| unknown +\| unknown +\| unknown +\|", text)
    assert re.search(r"\| median agent input tokens +\| 100 tokens +\| 100 tokens +\| ±0 tokens +\|", text)
    nothing = run({"s": [None, None]})
    unknown = comment(nothing, NoBaseline())
    assert "**Pass rate unknown**" in unknown and "| pass rate " in unknown
    assert re.search(r"\| pass\^k +\| unknown \(k = 2\)", unknown)


def test_the_headline_follows_the_verdict() -> None:
    fail = comment(*A_DROP, Gate(min_pass_rate=0.95))
    assert "## ❌ convy: fail · support" in fail and "**Decided by `min-pass-rate`:**" in fail
    passed = comment(*A_DROP)
    assert "## ✅ convy: pass · support" in passed and "not significant (p = 0.2, alpha 0.05)" in passed
    assert "**Pass rate 77.8% (45.3–93.7%)** now, 100.0% (70.1–100.0%) in the baseline" in passed
    assert "−22.2 points over the scenarios common and unchanged in both" in passed
    inconclusive = comment(run({"s": [None, True, True]}), A_DROP[1])
    assert "## ⚠️ convy: inconclusive · support" in inconclusive and "`max-no-verdict`" in inconclusive


def test_significance_is_stated_against_the_gates_alpha() -> None:
    names = [f"s{i}" for i in range(6)]
    before = run({n: [True] * 6 for n in names})
    worse = run({n: [True, False, False, True, False, False] for n in names})
    text = comment(worse, before, Gate(alpha=0.01))
    assert "a significant drop (p < 0.001, below alpha 0.01)" in text and "## ❌" in text
    better = comment(before, worse, Gate(alpha=0.01))
    assert "+66.7 points" in better and "a significant gain (p < 0.001, below alpha 0.01)" in better


def test_without_a_baseline_the_comment_says_so_and_gates_on_the_floor() -> None:
    now = run({"refund": [True, False, "http_500"], "greet": [True, True, None]})
    text = comment(now, NoBaseline(why="no earlier run on main"), Gate(min_pass_rate=0.5, max_failed=0.5))
    assert "now; no baseline (no earlier run on main): the gate decided on the floor only." in text
    assert "**Decided by `floor-only`:**" in text
    key, failing, every = tables(text)
    assert key[0] == 2 and (len(failing), failing[0]) == (2, 4) and (len(every), every[0]) == (3, 3)
    assert "### Scenarios with failed claims (1)" in text
    assert re.search(r"\| attempts failed by the agent +\| 1 \(http\\_500 ×1\) +\|", text)
    assert re.search(r"\| attempts without verdict +\| 1 \(16.7%\) +\|", text)


def test_an_interrupted_run_says_how_much_was_played() -> None:
    now = run({"a": [True, True], "b": [True]}, status="interrupted")
    assert "⚠️ Note: the run is interrupted: 3 of 4 attempts were played." in comment(now, NoBaseline())


def test_the_summary_and_the_decision_hold_the_figures_the_comment_shows() -> None:
    now = run({"a": [True, True, False], "b": [True, True, True], "c": [None, None, "timeout"]})
    assert (now.failed_attempts, now.no_verdict_attempts) == (1, 2)
    assert now.pass_k == Share(value=(0.0 + 1.0) / 2)
    assert run({"a": [True, None]}).pass_k == Unknown()
    assert judged(now, NoBaseline(), Gate(alpha=0.2))[1].alpha == 0.2
