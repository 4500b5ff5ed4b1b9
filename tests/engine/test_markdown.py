"""The pull request's comment, parsed as GitHub would: its marker, headline, tables and links; agent
text that cannot act; and a body under GitHub's limit however many scenarios and however long the
judge's reasons."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from convy.compare.comparison import NoBaseline
from convy.compare.gate import Gate
from convy.compare.statistics import Share, Unknown
from convy.compare.summary import Summary, Summed
from convy.draw.amount import Amount
from convy.draw.anchor import Anchor
from convy.draw.links import Links
from convy.draw.markdown import CommentMarkdown, Marker
from convy.play.outcome import ClaimResult, Failed, Outcome, Turn, Verdict
from convy.store.runfile import RunFile, RunSpec, ScenarioEntry
from tests.support.summaries import A_DROP, judged, run

MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])


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


def comment(now: Summary, baseline: Summary | NoBaseline, gate: Gate | None = None, **options: object) -> str:
    """The comment, its links those of a job whose pages were uploaded (PAGES) unless given."""
    comparison, decision = judged(now, baseline, gate)
    options.setdefault("links", PAGES)
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


OURS = re.compile(
    r"<details><summary>(All [0-9,]+ scenarios?|All metrics|Lower than the baseline, within noise "
    r"\([0-9,]+\))</summary>"
)


def ours(text: str) -> set[str]:
    """The HTML the comment itself may hold: its marker and the collapsed sections."""
    return {text.split("\n", 1)[0], "</details>"} | {m.group(0) for m in OURS.finditer(text)}


def every_scenario(text: str) -> int:
    """How many scenarios the collapsed "All N scenarios" section shows, a row or a list item each
    (a table too wide for a phone is a list), the `… N more` one left out."""
    section = text.split("<summary>All ", 2)[-1].split("</details>", 1)[0]
    rows = [
        line
        for line in section.splitlines()
        if line.startswith(("| ", "- ")) and "more scenarios" not in line
    ]
    header = 1 if rows and rows[0].startswith("| ") else 0
    return len(rows) - header


def open_tables(text: str) -> list[int]:
    """The number of columns of each table not inside a collapsed <details> section."""
    depth, columns = 0, []
    for token in MARKDOWN.parse(text):
        if token.type == "html_block":
            depth += token.content.count("<details>") - token.content.count("</details>")
        elif token.type == "table_open" and depth == 0:
            columns.append(-1)
        elif token.type == "tr_open" and depth == 0 and columns and columns[-1] == -1:
            columns[-1] = 0
        elif token.type == "th_open" and depth == 0 and columns:
            columns[-1] += 1
    return columns


PHONE = 42
"""The most characters a table shown open may be wide: GitHub draws a table as wide as its longest
cells; on a phone the comment's column is about 350 px, of which 26 px per cell are padding, at about
6.5 px a character."""


def open_widths(text: str) -> list[int]:
    """The width in characters of each table not inside a collapsed <details> section: for each
    column its longest cell as GitHub shows it (header included), added up."""
    depth, widths, rows = 0, [], []
    for token in MARKDOWN.parse(text):
        if token.type == "html_block":
            depth += token.content.count("<details>") - token.content.count("</details>")
        elif depth:
            continue
        elif token.type == "table_open":
            rows = []
        elif token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append(len("".join(t.content for t in token.children or [])))
        elif token.type == "table_close":
            widths.append(sum(max(column) for column in zip(*rows, strict=True)))
    return widths


def hrefs(text: str) -> list[str]:
    return [str(t.attrGet("href")) for t in flat(MARKDOWN.parse(text)) if t.type == "link_open"]


def scenario_links(text: str) -> list[str]:
    """The comment's links to a scenario's place in the report page or, for a scenario that
    changed, in the comparison page's side by side."""
    places = (f"{PAGES.report_page}#scenario-", f"{PAGES.comparison_page}#diff-scenario-")
    return [h for h in hrefs(text) if h.startswith(places)]


def assert_inert(text: str) -> None:
    tokens = flat(MARKDOWN.parse(text))
    allowed = ours(text)
    for token in tokens:
        if token.type in ("html_inline", "html_block"):
            assert token.content.strip() in allowed, token.content
        assert token.type not in ("image", "autolink"), token
    scenario = (
        f"(?:{re.escape(PAGES.report_page)}#|{re.escape(PAGES.comparison_page)}#diff-)scenario-[a-z0-9-]+"
    )
    ours_only = {PAGES.report, PAGES.run, PAGES.report_page, PAGES.comparison_page}
    assert all(re.fullmatch(scenario, h) or h in ours_only for h in hrefs(text)), hrefs(text)
    assert text.count("<details>") == text.count("</details>") >= 2
    for table in tables(text):
        assert len(set(table)) == 1, f"a row has an extra or missing cell: {table}"
    assert all(columns <= 3 for columns in open_tables(text)), open_tables(text)


def test_the_first_line_is_the_marker_and_the_agent_name_cannot_break_it() -> None:
    text = comment(*A_DROP)
    assert text.split("\n", 1)[0] == "<!-- convy-action:support -->"
    hostile = run({"s": [True]}, agent="x-->y<!--z>\n@all")
    first = comment(hostile, NoBaseline()).split("\n", 1)[0]
    assert first == Marker(agent="x-->y<!--z>\n@all").text() == "<!-- convy-action:x-_y_-z_all -->"
    block = MARKDOWN.parse(comment(hostile, NoBaseline()))[0]
    assert block.type == "html_block" and block.content == first + "\n"


def test_the_comment_is_laid_out_for_a_phone() -> None:
    before = run({n: [True] * 5 for n in ("refund", "address", "greet", "gone", "same")})
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
    assert_inert(text)
    lines = text.splitlines()
    assert lines[2] == "## ❌ convy: fail · support"
    assert lines[4] == "Judge: not measured against labels (convy label)", "right under the verdict"
    assert lines[6].startswith("**Decided by `max-drop`:** the pass rate dropped 45.0 points")
    assert text.count("convy: fail") == 1, "the verdict is said once"
    order = [
        text.index("### What failed (2)"),
        text.index("### Why attempts did not hold"),
        text.index("**Pass rate"),
        text.index("<details><summary>All metrics</summary>"),
        text.index("<details><summary>All 6 scenarios</summary>"),
    ]
    assert order == sorted(order)
    assert scenario_links(text) == [
        f"{PAGES.comparison_page}#{Anchor('address').diff()}",
        f"{PAGES.comparison_page}#{Anchor('refund').diff()}",
    ], "worst first"
    local = comment(*A_DROP, Gate(alpha=0.25), links=Links())
    assert hrefs(local) == [], "nothing uploaded (a local run): no link, and never a relative one"
    assert "0 of 5 held, 5 of 5 in the baseline (p = 0.00397, regressed)" in text
    assert "The agent asks for the order number. — failed 4 of 5; judge: It never asked" in text
    assert open_tables(text) == [3, 3], "the causes and the headline numbers, 3 columns each"
    assert all(width <= PHONE for width in open_widths(text)), open_widths(text)
    assert re.search(r"\| the agent +\| 9 +\| failed claims +\|\n", text)
    assert "\n- the agent — judge: It never asked for the order number.\n" in text
    assert re.search(r"\| pass rate +\| 64\.0% +\| 100\.0% +\|", text)
    assert re.search(r"\| 95% interval +\| 44\.5–79\.8% +\| 86\.7–100\.0% +\|", text)
    assert re.search(r"\| pass\^k +\| 60\.0% \(k = 5\) +\| 100\.0% \(k = 5\) +\|", text)
    assert every_scenario(text) == 6
    assert (
        text.index("**regressed** · ")
        < text.index("**new** · ")
        < text.index("**removed** · ")
        < text.index("**unchanged** · ")
    ), "a table of 5 columns is wider than a phone: a list"


def test_a_flaky_attempt_under_a_passing_gate_is_listed_collapsed_as_lower() -> None:
    text = comment(*A_DROP, links=Links())
    assert_inert(text)
    assert "## ✅ convy: pass · support" in text and "### Regressions" not in text
    collapsed = text.split("<details><summary>Lower than the baseline, within noise (1)</summary>", 1)[1]
    assert collapsed.split("</details>", 1)[0].strip().startswith("- **refund** — ")
    assert "1 of 3 held, 3 of 3 in the baseline (p = 0.2, lower)" in collapsed


def test_the_regression_links_find_their_side_by_side_in_the_comparison_page() -> None:
    from convy.draw.report import ComparisonPage
    from tests.support.html import parsed

    text = comment(*A_DROP, Gate(alpha=0.25), links=PAGES)
    (link, *_) = hrefs(text)
    assert link == f"{PAGES.comparison_page}#diff-{Anchor('refund').id()}"
    page = parsed(ComparisonPage(*judged(*A_DROP, Gate(alpha=0.25))).html())
    block = page.by_id(link.split("#", 1)[1])
    assert block.tag == "details" and block.all("span", "name")[0].text() == "refund"


def test_without_a_comparison_page_the_regression_links_find_their_row_in_the_report() -> None:
    from convy.draw.report import Report
    from tests.support.html import parsed

    links = Links(report=PAGES.report, run=PAGES.run, report_page=PAGES.report_page)
    text = comment(*A_DROP, Gate(alpha=0.25), links=links)
    (link, *_) = hrefs(text)
    assert link == f"{PAGES.report_page}#{Anchor('refund').id()}"
    page = parsed(Report(A_DROP[0], (), None).html())
    window = page.by_id(link.split("#", 1)[1])
    assert window.tag == "details" and window.all("span", "name")[0].text() == "refund"


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_agent_text_renders_inert(hostile: str) -> None:
    now = run({hostile: [False] * 5, "other": [True] * 5}, claim=hostile, reason=hostile)
    before = run({hostile: [True] * 5, "other": [True] * 5})
    text = comment(now, before)
    assert_inert(text)
    assert len(text) < 65_536 and "@org" not in text and "\x1b" not in text
    html = MARKDOWN.render(text)
    assert "<script" not in html and "<img" not in html and "javascript:" not in "".join(hrefs(text))
    assert len(scenario_links(text)) == 1 and every_scenario(text) == 2


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
    shown = len(scenario_links(text))
    assert shown == 5 and "- and 1,995 more (every one is under “All 2,000 scenarios”)" in text
    rest = re.search(r"… ([0-9,]+) more scenarios", text.split("<summary>All 2,000 scenarios")[1])
    assert rest and every_scenario(text) + int(rest.group(1).replace(",", "")) == 2000
    assert text.splitlines()[-1].startswith("📄 [report artifact]")


def test_many_scenarios_show_every_regression_and_as_many_others_as_fit() -> None:
    names = [f"scenario-with-a-rather-long-name-{i:04d}" for i in range(2000)]
    before = run({n: [True] * 5 for n in names})
    now = run({n: [False] * 5 if i < 5 else [True] * 5 for i, n in enumerate(names)})
    text = comment(now, before, limit=20_000)
    assert len(text) < 20_000
    assert len(scenario_links(text)) == 5
    more = re.search(r"… ([0-9,]+) more scenarios", text)
    assert more and every_scenario(text) + int(more.group(1).replace(",", "")) == 2000
    assert "📄 [report artifact]" in text.splitlines()[-1]


PAGES = Links(
    report="https://github.com/o/r/actions/runs/7/artifacts/11",
    run="https://github.com/o/r/actions/runs/7",
    report_page="https://github.com/o/r/actions/runs/7/artifacts/12",
    comparison_page="https://github.com/o/r/actions/runs/7/artifacts/13",
)


def test_every_link_is_absolute_and_the_pages_are_linked() -> None:
    text = comment(*A_DROP, Gate(alpha=0.25), links=PAGES)
    found = hrefs(text)
    assert found and all(h.startswith("https://") for h in found)
    assert PAGES.report_page in found and PAGES.comparison_page in found and PAGES.report in found


def test_the_worst_case_fits_the_smallest_limit() -> None:
    long = "<@x>|" * 20_000
    now = run(
        {long + str(i): [f"{long}{i}", True, False] for i in range(50)}, agent=long, reason=long, claim=long
    )
    links = Links(report="https://example.com/" + "a" * 1900, run="https://example.com/" + "b" * 1900)
    text = comment(now, NoBaseline(why=long), Gate(min_pass_rate=0.9), links=links, limit=16_384)
    assert len(text) < 16_384
    tokens = flat(MARKDOWN.parse(text))
    assert all(t.type != "image" for t in tokens)
    assert set(hrefs(text)) <= {links.report, links.run} and links.run in hrefs(text)


def test_links_are_ours_or_placeholders() -> None:
    text = comment(
        *A_DROP,
        links=Links(
            report="https://github.com/o/r/actions/runs/7#artifacts",
            run="https://github.com/o/r/actions/runs/7",
        ),
    )
    # without pages uploaded on their own, a scenario's link goes to the run's artifact
    assert set(hrefs(text)) == {
        "https://github.com/o/r/actions/runs/7#artifacts",
        "https://github.com/o/r/actions/runs/7",
    }
    assert "report artifact: not uploaded" in comment(*A_DROP, links=Links())
    with pytest.raises(ValueError, match="http"):
        Links(report="javascript:alert(1)")
    with pytest.raises(ValueError, match="http"):
        Links(run="https://x.example/a>b")


def test_a_limit_too_small_for_the_headline_is_refused() -> None:
    comparison, decision = judged(*A_DROP)
    with pytest.raises(ValueError, match="limit"):
        CommentMarkdown(comparison, decision, Links(), 1000)


def test_unknown_figures_render_as_unknown_medians_keep_their_half_and_zero_has_no_sign() -> None:
    text = comment(*A_DROP)
    assert "- **median judge tokens** · now unknown · baseline unknown · change unknown" in text
    assert "- **median agent input tokens** · now 100 tokens · baseline 100 tokens · change ±0 tokens" in text
    assert "−0.00 s" not in text and "±0.00 s" in text
    nothing = run({"s": [None, None]})
    unknown = comment(nothing, NoBaseline())
    assert "**Pass rate unknown**" in unknown and "| pass rate " in unknown
    assert re.search(r"\| pass\^k +\| unknown \(k = 2\)", unknown)
    assert Amount(value=39.5, unit="tokens").text() == "39.5 tokens"
    assert Amount(value=40.0, unit="tokens").text() == "40 tokens"
    assert Amount(value=-0.001, unit="s").signed() == "±0.00 s"
    assert Amount(value=-0.5, unit="tokens").signed() == "−0.5 tokens"


def test_the_headline_follows_the_verdict() -> None:
    fail = comment(*A_DROP, Gate(min_pass_rate=0.95))
    assert "## ❌ convy: fail · support" in fail and "**Decided by `min-pass-rate`:**" in fail
    assert "### Regressions" not in fail and "### Why attempts did not hold" in fail
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
    assert_inert(text)
    assert "now; no baseline (no earlier run on main): the gate decided on the floor only." in text
    assert "**Decided by `floor-only`:**" in text
    assert "### Scenarios with failed claims (1)" in text
    assert re.search(r"\| agent failed +\| 1 +\|", text) and "\n- agent failures now: http\\_500 ×1" in text
    assert re.search(r"\| no verdict +\| 1 \(16.7%\) +\|", text)
    assert re.search(r"\| the agent +\| 2 +\| ", text) and re.search(
        r"\| the judge +\| 1 +\| model\\_failure", text
    )
    assert all(width <= PHONE for width in open_widths(text)), open_widths(text)


def test_a_broken_agent_s_comment_names_the_cause_and_its_message() -> None:
    outcomes = [
        Outcome(
            scenario="s",
            index=i,
            fingerprint="f",
            turns=(),
            seconds=0.1,
            decision=Failed(reason="http_400", status=400, message="Invalid model name"),
        )
        for i in range(3)
    ]
    spec = RunSpec(agent="support", repeat=3, scenarios=(ScenarioEntry(name="s", fingerprint="f"),))
    now = Summed(
        RunFile(format=1, spec=spec, status="finished", started="t"), "r/support/1", outcomes
    ).summary()
    text = comment(now, NoBaseline(why="first run"))
    assert_inert(text)
    assert "## ❌ convy: fail · support" in text
    assert "**Decided by `max-failed`:** the agent failed 3 of 3 attempts (100.0%)" in text
    assert "commonest: http\\_400 ×3 (HTTP 400): Invalid model name" in text
    assert re.search(r"\| the agent +\| 3 +\| http\\_400 +\|\n", text)
    assert "\n- the agent — Invalid model name\n" in text


def test_an_interrupted_run_says_how_much_was_played() -> None:
    now = run({"a": [True, True], "b": [True]}, status="interrupted")
    assert "⚠️ The run is interrupted: 3 of 4 attempts were played." in comment(now, NoBaseline())


def test_the_summary_and_the_decision_hold_the_figures_the_comment_shows() -> None:
    now = run({"a": [True, True, False], "b": [True, True, True], "c": [None, None, "timeout"]})
    assert (now.failed_attempts, now.no_verdict_attempts) == (1, 2)
    assert now.pass_k == Share(value=(0.0 + 1.0) / 2)
    assert run({"a": [True, None]}).pass_k == Unknown()
    assert judged(now, NoBaseline(), Gate(alpha=0.2))[1].alpha == 0.2


def test_a_check_s_failure_is_labelled_check_and_a_claim_s_judge() -> None:
    from convy.draw.console import ConsoleText

    def attempt(index: int, check: bool) -> Outcome:
        failed = (
            ClaimResult(claim="contains 'refund'", passed=False, reason="no answer has it", check=True)
            if check
            else ClaimResult(claim="The agent apologises.", passed=False, reason="It never did.")
        )
        claims = (ClaimResult(claim="The agent greets the user.", passed=True, reason="it did"), failed)
        turn = Turn(user="u", agent="a", seconds=0.5)
        return Outcome(
            scenario="refund",
            index=index,
            fingerprint="f",
            turns=(turn,),
            seconds=1.0,
            decision=Verdict(holds=False, claims=claims),
        )

    outcomes = [attempt(0, True), attempt(1, True), attempt(2, False)]
    spec = RunSpec(agent="support", repeat=3, scenarios=(ScenarioEntry(name="refund", fingerprint="f"),))
    now = Summed(
        RunFile(format=1, spec=spec, status="finished", started="t"), "r/support/1", outcomes
    ).summary()
    comparison, decision = judged(now, NoBaseline(why="first run"))
    text = CommentMarkdown(comparison, decision).text()
    assert_inert(text)
    assert "commonest: failed claims ×3: check: no answer has it." in text
    assert "  - contains 'refund' — failed 2 of 2; check: no answer has it\n" in text
    assert "  - The agent apologises. — failed 1 of 1; judge: It never did.\n" in text
    assert "\n- the agent — check: no answer has it\n" in text
    assert "judge: no answer has it" not in text
    console = ConsoleText(comparison, decision).text()
    assert "check: no answer has it" in console and "judge: It never did." in console
    assert "judge's reason" not in console and "judge: no answer has it" not in console
