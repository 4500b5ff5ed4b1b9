"""The pages in headless Chromium: the scenario table has a row per scenario, the filters narrow it,
the address keeps the filter, a row opens its scenario's window (a <details>), a comment's link opens
it too, and HTML or script an agent wrote shows as text and never runs. The pages at a phone's
width and with scripts blocked are test_phone.py's."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from convy.compare.comparison import Compared
from convy.compare.gate import Gate
from convy.compare.summary import Summary, Summed
from convy.draw.anchor import Anchor
from convy.draw.report import ComparisonPage, Index, Report
from convy.play.agent import Call, Thought, Usage
from convy.play.outcome import ClaimResult, Failed, NoVerdict, Outcome, Turn, Verdict
from convy.store.runfile import RunFile, RunSpec, ScenarioEntry
from tests.browser.chromium import Chromium

IMG = "<img src=x onerror=\"document.body.setAttribute('data-pwned','img');document.title='pwned'\">"
SCRIPT = "<script>document.body.setAttribute('data-pwned','script')</script>"
BREAKOUT = "</script><script>document.body.setAttribute('data-pwned','breakout')</script>"
LINK = "[click me](javascript:document.body.setAttribute('data-pwned','link'))"
ANSWER = (
    f"Here is **your refund**.\n\n{IMG}\n\nAnd {SCRIPT} {BREAKOUT} {LINK} ![x](https://example.com/x.png)"
)


def attempt(scenario: str, index: int, holds: bool | None, answer: str = "Your order shipped.") -> Outcome:
    decision: Verdict | Failed | NoVerdict
    if holds is None:
        decision = NoVerdict(reason="model_failure", detail="the judge answered no JSON")
    else:
        decision = Verdict(
            holds=holds,
            claims=(ClaimResult(claim="The agent is helpful.", passed=holds, reason=f"Because {IMG}"),),
        )
    steps = (Call(name="lookup_order", arguments='{"order": "4411"}', result=SCRIPT), Thought(text=IMG))
    turn = Turn(
        user=f"Where is my order? {IMG}", agent=answer, seconds=0.4, usage=Usage(input=10), steps=steps
    )
    return Outcome(
        scenario=scenario, index=index, fingerprint="f", turns=(turn,), seconds=1.0, decision=decision
    )


RESULTS: dict[str, list[bool | None]] = {
    "refund-late-order": [True, False, True],
    "order-status": [True, True, True],
    "talk-to-human": [False, False, False],
    "cancel-subscription": [None, True, None],
    "<b>bold</b> scenario": [True, True, False],
    "never-judged": [None, None, None],
}


def run(
    results: dict[str, list[bool | None]], folder: str = "results/support/run-1"
) -> tuple[Summary, list[Outcome]]:
    spec = RunSpec(
        agent="support",
        repeat=3,
        scenarios=tuple(
            ScenarioEntry(name=n, fingerprint="f", file=f"scenarios/{n}.yaml", line=1) for n in results
        ),
    )
    outcomes = [
        attempt(name, index, holds, ANSWER if name == "refund-late-order" else "Your order **shipped**.")
        for name, said in results.items()
        for index, holds in reversed(list(enumerate(said)))
    ]
    file = RunFile(format=1, spec=spec, status="finished", started="2026-11-30T18:30:00Z")
    return Summed(file, folder, outcomes).summary(), outcomes


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    summary, outcomes = run(RESULTS)
    decision = Gate().decision(Compared(summary, summary).comparison())
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(Report(summary, iter(outcomes), decision).html(), encoding="utf-8")
    return path


ROWS = "[...document.querySelectorAll('#scenarios tbody tr:not(.empty)')]"
SHOWN = f"{ROWS}.filter(r => !r.hidden).map(r => r.cells[0].textContent)"
WINDOW = "document.getElementById({anchor!r})"


def window(name: str) -> str:
    return WINDOW.format(anchor=Anchor(name).id())


def test_the_table_has_one_row_per_scenario_in_declaration_order(browser: Chromium, report: Path) -> None:
    tab = browser.tab()
    tab.open(report.as_uri())
    assert tab.value(SHOWN) == list(RESULTS)
    assert tab.value("document.querySelectorAll('.tile').length") >= 6
    assert tab.value("document.querySelectorAll('svg rect.bar').length") == len(RESULTS) - 1  # one is unknown
    assert tab.value("document.title") == "support · run run-1 · convy"
    assert tab.value("[...document.querySelectorAll('details.window')].map(d => d.open)") == [False] * 6
    assert tab.problems() == []


def test_typing_in_the_filter_narrows_the_table_and_the_status_filter_too(
    browser: Chromium, report: Path
) -> None:
    tab = browser.tab()
    tab.open(report.as_uri())
    assert tab.value("document.querySelector('#scenarios input[type=search]').hidden") is False
    tab.type("#scenarios input[type=search]", "order")
    assert tab.value(SHOWN) == ["refund-late-order", "order-status"]
    assert "q=order" in tab.value("location.hash")
    tab.value(
        "(s => { s.value = 'passing'; s.dispatchEvent(new Event('change')); })"
        "(document.querySelector('#scenarios select'))"
    )
    assert tab.value(SHOWN) == ["order-status"]
    tab.type("#scenarios input[type=search]", "-nothing-like-it")
    assert tab.value(SHOWN) == []
    assert tab.value("document.querySelector('#scenarios tr.empty').hidden") is False
    assert tab.problems() == []


def test_the_address_keeps_the_filter(browser: Chromium, report: Path) -> None:
    tab = browser.tab()
    tab.open(report.as_uri() + "#q=talk&status=failing")
    assert tab.value(SHOWN) == ["talk-to-human"]
    assert tab.value("document.querySelector('#scenarios select').value") == "failing"


def test_a_row_opens_its_window_with_attempts_claims_and_transcript(browser: Chromium, report: Path) -> None:
    tab = browser.tab()
    tab.open(report.as_uri())
    tab.value(f"{ROWS}[0].cells[2].click()")
    opened = window("refund-late-order")
    assert tab.until(f"{opened}.open") is True
    assert tab.value("location.hash") == "#" + Anchor("refund-late-order").id()
    assert tab.value("document.querySelector('tr.target').cells[0].textContent") == "refund-late-order"
    assert tab.value(f"[...{opened}.querySelectorAll('details.attempt .title')].map(n => n.textContent)") == [
        "Attempt 1",
        "Attempt 2",
        "Attempt 3",
    ]
    assert tab.value(f"[...{opened}.querySelectorAll('details.attempt')].map(d => d.open)") == [
        False,
        True,
        False,
    ]
    text = tab.value(f"{opened}.textContent")
    assert "The agent is helpful." in text and "lookup_order" in text and "did not hold" in text
    assert tab.value(f"{opened}.querySelector('details[open] .markdown strong').textContent") == "your refund"
    tab.value(f"{ROWS}[2].querySelector('a').click()")
    assert tab.until(f"{window('talk-to-human')}.open") is True
    assert tab.problems() == []


def test_html_an_agent_wrote_shows_as_text_and_never_runs(browser: Chromium, report: Path) -> None:
    tab = browser.tab()
    tab.open(report.as_uri())
    opened = window("refund-late-order")
    tab.value(f"{opened}.open = true; {opened}.querySelectorAll('details').forEach(d => d.open = true)")
    time.sleep(0.3)  # time for an error event of an injected image, were there one
    text = tab.value(f"{opened}.textContent")
    for payload in (IMG, SCRIPT, BREAKOUT, "[image: x] https://example.com/x.png"):
        assert payload in text
    assert "click me" in text and "javascript:" in text
    assert tab.value("document.body.dataset.pwned === undefined") is True
    assert tab.value("document.title") == "support · run run-1 · convy"
    assert tab.value("document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert tab.value("document.querySelectorAll('script').length") == 1
    hrefs = tab.value("[...document.querySelectorAll('a')].map(a => a.getAttribute('href'))")
    assert hrefs and all(href.startswith("#scenario-") for href in hrefs)
    assert tab.value(f"{ROWS}[4].cells[0].textContent") == "<b>bold</b> scenario"
    assert tab.problems() == []


def test_the_comparison_page_lists_statuses_and_filters_them(browser: Chromium, tmp_path: Path) -> None:
    before, _ = run({"a": [True, True, True], "b": [True, False, True], "gone": [True, True, True]})
    now, _ = run({"a": [False, False, False], "b": [True, True, True], "new": [True, True, True]})
    comparison = Compared(now, before).comparison()
    page = tmp_path / "comparison.html"
    page.write_text(ComparisonPage(comparison, Gate().decision(comparison)).html(), encoding="utf-8")
    tab = browser.tab()
    tab.open(page.as_uri())
    assert tab.value(SHOWN) == ["a", "new", "gone", "b"]
    assert tab.value("document.querySelector('.headline .verdict').textContent") == "pass"
    tab.value(
        "(s => { s.value = 'lower'; s.dispatchEvent(new Event('change')); })"
        "(document.querySelector('#scenarios select'))"
    )
    assert tab.value(SHOWN) == ["a"]
    assert tab.value("document.querySelectorAll('#deltas tbody tr:not(.empty)').length") == len(
        comparison.deltas
    )
    assert tab.problems() == []


def test_the_index_links_each_run_and_draws_the_trend(browser: Chromium, tmp_path: Path) -> None:
    first, _ = run({"a": [True, False, True]}, "results/support/20261101T000000Z-aaaa")
    second, _ = run({"a": [True, True, True]}, "results/support/20261102T000000Z-bbbb")
    page = tmp_path / "index.html"
    page.write_text(Index((first, second)).html(), encoding="utf-8")
    tab = browser.tab()
    tab.open(page.as_uri())
    links = tab.value("[...document.querySelectorAll('#runs tbody a')].map(a => a.getAttribute('href'))")
    assert links == ["support/20261102T000000Z-bbbb/report.html", "support/20261101T000000Z-aaaa/report.html"]
    assert tab.value("document.querySelectorAll('svg circle.point').length") == 2
    assert tab.problems() == []


def test_the_policy_stops_a_handler_or_a_script_that_got_into_the_page_anyway(
    browser: Chromium, report: Path
) -> None:
    tab = browser.tab()
    tab.open(report.as_uri())
    tab.value(
        "(() => { const i = document.createElement('img');"
        " i.setAttribute('onerror', \"document.body.dataset.pwned = 'handler'\"); i.src = 'x.png';"
        " document.body.append(i);"
        " const s = document.createElement('script');"
        " s.textContent = \"document.body.dataset.pwned = 'script'\";"
        " document.body.append(s); })()"
    )
    time.sleep(0.3)
    assert tab.value("document.body.dataset.pwned === undefined") is True
    assert any("Content Security Policy" in problem for problem in tab.problems())


def test_a_comment_s_link_opens_the_scenario_s_window_and_marks_its_row(
    browser: Chromium, report: Path
) -> None:
    tab = browser.tab()
    tab.open(report.as_uri() + "#" + Anchor("talk-to-human").id())
    opened = window("talk-to-human")
    assert tab.value(f"{opened}.tagName") == "DETAILS" and tab.value(f"{opened}.open") is True
    assert tab.value(f"{opened}.querySelector('summary .name').textContent") == "talk-to-human"
    assert tab.value("document.querySelector('tr.target').cells[0].textContent") == "talk-to-human"
    assert tab.value(f"{opened}.getBoundingClientRect().top") < tab.value("innerHeight")
    whose = "[...document.querySelectorAll('#parties tbody tr:not(.empty)')].map(r => r.cells[0].textContent)"
    assert tab.value(whose) == ["the agent", "the judge"]
    assert tab.problems() == []
