"""The pages on a phone and with scripts blocked (docs/comment.md): at 400 px no table or other element
of report.html, comparison.html or index.html is wider than the screen (a wide table is one card per
row), chart labels are at least 11 px, and with JavaScript blocked a link to
`report.html#scenario-…` shows that scenario's attempts, claims and transcript."""

from __future__ import annotations

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
from tests.browser.chromium import Chromium, Tab
from tests.support.page_scripts import WIDEST

PHONE = 400
LONG = "refund-a-late-order-placed-with-a-gift-card-in-another-currency"
UNBROKEN = "https://shop.example.com/orders/4411/refunds?" + "token=" + "x" * 120
ANSWER = (
    f"Your refund for order **4411** is on its way: see {UNBROKEN}\n\n"
    "| item | price |\n|---|---|\n| mug | 12.00 |\n\n```\n" + "{" + '"id": 4411, ' * 12 + "}\n```"
)
RESULTS: dict[str, list[bool | None | str]] = {
    LONG: [True, False, False],
    "order-status": [True, True, True],
    "talk-to-human": [False, False, False],
    "cancel-subscription": [None, True, "http_500"],
}

LABELS = """[...document.querySelectorAll('.chart text, .chart .label, .chart .value, .chart figcaption')]
  .filter(n => n.getClientRects().length)
  .map(n => [n.textContent, parseFloat(getComputedStyle(n).fontSize), n.getBoundingClientRect().height])"""
SHOWN = "(n => !!n && n.checkVisibility() && n.getBoundingClientRect().height > 0)"


def attempt(scenario: str, index: int, held: bool | None | str) -> Outcome:
    decision: Verdict | Failed | NoVerdict
    match held:
        case None:
            decision = NoVerdict(reason="judge_unreadable", detail="judge: not JSON", raw="{" * 300)
        case str(reason):
            decision = Failed(reason=reason, detail="upstream said no " * 20, status=500)
        case bool(holds):
            decision = Verdict(
                holds=holds,
                claims=(
                    ClaimResult(
                        claim="The agent offers a refund to the original payment method.",
                        passed=holds,
                        reason="The agent's second answer offers it." if holds else "It never does.",
                    ),
                    ClaimResult(
                        claim=f"contains '{UNBROKEN[:60]}'",
                        passed=holds,
                        check=True,
                        reason="answer 1 has it" if holds else "no answer has it",
                    ),
                ),
            )
    steps = (
        Call(name="lookup_order", arguments='{"order": "4411", "note": "' + "n" * 150 + '"}', result="ok"),
        Thought(text="The customer wants " + "a" * 150),
    )
    turn = Turn(
        user=f"Where is my refund? {UNBROKEN}", agent=ANSWER, seconds=0.4, usage=Usage(input=10), steps=steps
    )
    return Outcome(
        scenario=scenario, index=index, fingerprint="f", turns=(turn, turn), seconds=1.0, decision=decision
    )


def run(results: dict[str, list[bool | None | str]], folder: str) -> tuple[Summary, list[Outcome]]:
    spec = RunSpec(
        agent="support-bot-with-a-long-name",
        repeat=3,
        scenarios=tuple(
            ScenarioEntry(name=n, fingerprint="f", file=f"scenarios/{n}.yaml", line=1) for n in results
        ),
    )
    outcomes = [
        attempt(name, index, held) for name, said in results.items() for index, held in enumerate(said)
    ]
    file = RunFile(format=1, spec=spec, status="finished", started="2026-11-30T18:30:00Z")
    return Summed(file, folder, outcomes).summary(), outcomes


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("phone")
    before, earlier = run(
        {**RESULTS, LONG: [True, True, True], "gone-from-the-suite": [True]},
        "results/s/20261101T000000Z-aaaa",
    )
    now, outcomes = run(RESULTS, "results/s/20261102T000000Z-bbbb")
    comparison = Compared(now, before).comparison()
    decision = Gate().decision(comparison)
    written = {
        "report": Report(now, outcomes, decision).html(),
        "comparison": ComparisonPage(comparison, decision, outcomes, earlier).html(),
        "index": Index((before, now)).html(),
    }
    for name, html in written.items():
        (folder / f"{name}.html").write_text(html, encoding="utf-8")
    return {name: folder / f"{name}.html" for name in written}


def opened(browser: Chromium, page: Path, width: int, address: str = "") -> Tab:
    tab = browser.tab()
    tab.viewport(width)
    tab.open(page.as_uri() + address)
    return tab


@pytest.mark.parametrize("name", ["report", "comparison", "index"])
def test_at_400_px_no_table_or_element_is_wider_than_the_screen(
    browser: Chromium, pages: dict[str, Path], name: str
) -> None:
    tab = opened(browser, pages[name], PHONE)
    assert tab.value("innerWidth") == PHONE
    for every in (False, True):
        if every:
            tab.value("document.querySelectorAll('details').forEach(d => d.open = true)")
        widest = tab.value(WIDEST)
        assert widest["page"] <= PHONE and widest["wide"] == [], widest
        assert widest["tables"] and max(widest["tables"]) <= PHONE, widest
    assert tab.value("getComputedStyle(document.querySelector('table thead')).display") == "none"
    labelled = "[...document.querySelectorAll('table.cards tbody tr:not(.empty) td')]"
    assert tab.value(f"{labelled}.every(td => td.getAttribute('data-label'))") is True
    assert tab.problems() == []


def test_at_1280_px_the_tables_are_tables(browser: Chromium, pages: dict[str, Path]) -> None:
    tab = opened(browser, pages["comparison"], 1280)
    assert (
        tab.value("getComputedStyle(document.querySelector('#scenarios thead')).display")
        == "table-header-group"
    )
    assert tab.value("document.querySelector('#scenarios tbody tr').cells.length") == 6


@pytest.mark.parametrize("name", ["report", "comparison", "index"])
def test_chart_labels_are_at_least_11_px_on_a_phone(
    browser: Chromium, pages: dict[str, Path], name: str
) -> None:
    tab = opened(browser, pages[name], PHONE)
    labels = tab.value(LABELS)
    assert len(labels) >= 6
    small = [label for label in labels if label[1] < 11 or label[2] < 11]
    assert small == [], small


def test_with_scripts_blocked_a_link_shows_the_scenario_s_attempts_and_transcript(
    browser: Chromium, pages: dict[str, Path]
) -> None:
    tab = browser.tab()
    tab.viewport(PHONE)
    tab.without_scripts()
    anchor = Anchor(LONG).id()
    tab.open(pages["report"].as_uri() + "#" + anchor)
    assert tab.value("document.querySelector('#scenarios input[type=search]').hidden") is True, "a script ran"
    target = f"document.getElementById('{anchor}')"
    assert tab.value(f"{target}.open") is False, "nothing but CSS opened it"
    assert tab.value(f"{SHOWN}({target}.querySelector('.window-body'))") is True
    assert tab.value(f"{target}.getBoundingClientRect().top") < tab.value("innerHeight")
    attempts = f"[...{target}.querySelectorAll('details.attempt')]"
    assert tab.value(f"{attempts}.map(a => a.querySelector('.title').textContent)") == [
        "Attempt 1",
        "Attempt 2",
        "Attempt 3",
    ]
    unheld = f"{target}.querySelectorAll('details.attempt')[1]"
    assert tab.value(f"{SHOWN}({unheld}.querySelector('table.claims'))") is True
    assert tab.value(f"{SHOWN}({unheld}.querySelector('.turn .message.agent'))") is True
    said = tab.value(f"{unheld}.querySelector('.turn').innerText")
    assert "Where is my refund?" in said and "lookup_order" in said and "Your refund for order" in said
    assert "check: no answer has it" in tab.value(f"{unheld}.querySelector('table.claims').innerText")
    other = f"document.getElementById('{Anchor('talk-to-human').id()}')"
    assert tab.value(f"{SHOWN}({other}.querySelector('.window-body'))") is False
    assert tab.value(WIDEST)["wide"] == []
