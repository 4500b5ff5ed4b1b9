"""The pages in headless Chromium: the scenario table has a row per scenario, the filters narrow it,
a row opens its scenario's window, the address keeps the filter, and HTML or script an agent wrote
shows as text and never runs.

Chromium is driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: commands on
file descriptor 3, replies and events on 4, each a JSON text ended by a NUL byte), so nothing beyond
the standard library is needed. Without Chromium these tests fail, saying how to install it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from convy.compare.comparison import Compared
from convy.compare.gate import Gate
from convy.compare.summary import Summary, Summed
from convy.draw.report import ComparisonPage, Index, Report
from convy.play.agent import Call, Thought, Usage
from convy.play.outcome import ClaimResult, Failed, NoVerdict, Outcome, Turn, Verdict
from convy.store.journal import RunFile, RunSpec, ScenarioEntry

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL = (
    "headless Chromium is needed for the browser tests and was not found (looked for "
    + ", ".join(NAMES)
    + ", or the CHROMIUM variable): install it, e.g. `apt-get install -y chromium chromium-driver`"
)
WAIT = 30.0
PLACED = (
    "import os, sys\n"
    "for fd, at in zip(map(int, sys.argv[1:3]), (3, 4)):\n"
    "    os.dup2(fd, at)\n"
    "    os.close(fd)\n"
    "os.execv(sys.argv[3], sys.argv[3:])\n"
)
"""Starts Chromium with the pipe's ends where --remote-debugging-pipe wants them: fds 3 and 4."""

IMG = "<img src=x onerror=\"document.body.setAttribute('data-pwned','img');document.title='pwned'\">"
SCRIPT = "<script>document.body.setAttribute('data-pwned','script')</script>"
BREAKOUT = "</script><script>document.body.setAttribute('data-pwned','breakout')</script>"
LINK = "[click me](javascript:document.body.setAttribute('data-pwned','link'))"
ANSWER = (
    f"Here is **your refund**.\n\n{IMG}\n\nAnd {SCRIPT} {BREAKOUT} {LINK} ![x](https://example.com/x.png)"
)


class Chromium:
    """A headless Chromium and its DevTools pipe."""

    def __init__(self, executable: str, profile: Path) -> None:
        self._executable = executable
        self._profile = profile
        self._next = 0
        self._buffer = b""
        self.events: list[dict[str, Any]] = []

    def __enter__(self) -> Chromium:
        commands, self._commands = os.pipe()
        self._replies, replies = os.pipe()
        theirs = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (commands, replies)]
        for fd in (commands, replies):
            os.close(fd)
        flags = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            f"--user-data-dir={self._profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self._log = (self._profile.parent / "chromium.log").open("wb")
        self._process = subprocess.Popen(
            [sys.executable, "-c", PLACED, *map(str, theirs), self._executable, *flags],
            pass_fds=theirs,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
        )
        for fd in theirs:
            os.close(fd)
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            self.send("Browser.close")
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._commands)
        os.close(self._replies)
        self._log.close()

    def send(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> dict[str, Any]:
        """Send a command and wait for its reply; events that come meanwhile are kept."""
        number = self.post(method, params, session)
        deadline = time.monotonic() + WAIT
        while True:
            message = self.receive(deadline)
            if message.get("id") == number:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result

    def post(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> int:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        return self._next

    def receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._replies], [], [], max(0.0, left))
            if not ready:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._replies, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self._buffer += chunk
        text, _, self._buffer = self._buffer.partition(b"\0")
        message: dict[str, Any] = json.loads(text)
        if "method" in message:
            self.events.append(message)
            if message["method"] == "Page.javascriptDialogOpening":
                self.post("Page.handleJavaScriptDialog", {"accept": True}, message.get("sessionId", ""))
        return message

    def tab(self) -> Tab:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        tab = Tab(self, session)
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session=session)
        return tab


class Tab:
    """One page of the browser."""

    def __init__(self, browser: Chromium, session: str) -> None:
        self._browser = browser
        self._session = session

    def open(self, url: str) -> None:
        seen = len(self._browser.events)
        self._browser.send("Page.navigate", {"url": url}, self._session)
        deadline = time.monotonic() + WAIT
        while not any(
            e["method"] == "Page.loadEventFired" and e.get("sessionId") == self._session
            for e in self._browser.events[seen:]
        ):
            self._browser.receive(deadline)

    def value(self, expression: str) -> Any:
        result = self._browser.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, self._session
        )
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def until(self, expression: str) -> Any:
        """The expression's value once it is truthy (events such as a dialog's close come later)."""
        deadline = time.monotonic() + WAIT
        while not (value := self.value(expression)):
            if time.monotonic() > deadline:
                raise AssertionError(f"never true: {expression}")
            time.sleep(0.02)
        return value

    def type(self, selector: str, text: str) -> None:
        """Focus an input and type into it as a user would."""
        assert self.value(f"document.querySelector({json.dumps(selector)}).focus(), true")
        self._browser.send("Input.insertText", {"text": text}, self._session)

    def problems(self) -> list[str]:
        """Script errors, blocked content and dialogs this tab had."""
        found = []
        for event in self._browser.events:
            if event.get("sessionId") != self._session:
                continue
            match event["method"]:
                case "Runtime.exceptionThrown":
                    found.append(json.dumps(event["params"]["exceptionDetails"])[:500])
                case "Log.entryAdded" if event["params"]["entry"]["level"] == "error":
                    found.append(event["params"]["entry"]["text"])
                case "Page.javascriptDialogOpening":
                    found.append("dialog: " + event["params"]["message"])
        return found


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    names = (os.environ["CHROMIUM"],) if os.environ.get("CHROMIUM") else NAMES
    executable = next(filter(None, map(shutil.which, names)), None)
    if not executable:
        pytest.fail(INSTALL)
    with Chromium(executable, tmp_path_factory.mktemp("chromium") / "profile") as chromium:
        yield chromium


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


def test_the_table_has_one_row_per_scenario_in_declaration_order(browser: Chromium, report: Path) -> None:
    tab = browser.tab()
    tab.open(report.as_uri())
    assert tab.value(SHOWN) == list(RESULTS)
    assert tab.value("document.querySelectorAll('.tile').length") >= 6
    assert tab.value("document.querySelectorAll('svg rect.bar').length") == len(RESULTS) - 1  # one is unknown
    assert tab.value("document.title") == "support · run run-1 · convy"
    assert tab.problems() == []


def test_typing_in_the_filter_narrows_the_table_and_the_status_filter_too(
    browser: Chromium, report: Path
) -> None:
    tab = browser.tab()
    tab.open(report.as_uri())
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


def test_the_address_keeps_the_filter_and_the_open_window(browser: Chromium, report: Path) -> None:
    tab = browser.tab()
    tab.open(report.as_uri() + "#q=talk&open=2")
    assert tab.value(SHOWN) == ["talk-to-human"]
    assert tab.value("document.querySelector('dialog.window').open") is True
    assert tab.value("document.querySelector('dialog.window h2').textContent") == "talk-to-human"


def test_a_row_opens_its_window_with_attempts_claims_and_transcript(browser: Chromium, report: Path) -> None:
    tab = browser.tab()
    tab.open(report.as_uri())
    tab.value(f"{ROWS}[0].click()")
    window = "document.querySelector('dialog.window')"
    assert tab.value(f"{window}.open") is True
    assert tab.value(f"[...{window}.querySelectorAll('details.attempt .title')].map(n => n.textContent)") == [
        "Attempt 1",
        "Attempt 2",
        "Attempt 3",
    ]
    tab.value(f"{window}.querySelectorAll('details.attempt').forEach(d => d.open = true)")
    text = tab.value(f"{window}.textContent")
    assert "The agent is helpful." in text and "lookup_order" in text and "did not hold" in text
    assert tab.value(f"{window}.querySelector('.markdown strong').textContent") == "your refund"
    assert "open=0" in tab.value("location.hash")
    tab.value(f"{window}.querySelector('button.close').click()")
    assert tab.value(f"{window}.open") is False
    assert tab.until("!location.hash.includes('open')")
    assert tab.problems() == []


def test_html_an_agent_wrote_shows_as_text_and_never_runs(browser: Chromium, report: Path) -> None:
    tab = browser.tab()
    tab.open(report.as_uri())
    tab.value(f"{ROWS}[0].click()")
    window = "document.querySelector('dialog.window')"
    tab.value(f"{window}.querySelectorAll('details.attempt').forEach(d => d.open = true)")
    time.sleep(0.3)  # time for an error event of an injected image, were there one
    text = tab.value(f"{window}.textContent")
    for payload in (IMG, SCRIPT, BREAKOUT, "[image: x] https://example.com/x.png"):
        assert payload in text
    assert "click me" in text and "javascript:" in text
    assert tab.value("document.body.dataset.pwned === undefined") is True
    assert tab.value("document.title") == "support · run run-1 · convy"
    assert tab.value("document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert tab.value("document.querySelectorAll('script').length") == 2
    assert tab.value("document.querySelectorAll('a').length") == 0
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


def test_a_comment_s_link_shows_the_scenario_s_row_and_opens_its_window(
    browser: Chromium, report: Path
) -> None:
    from convy.draw.anchor import Anchor

    tab = browser.tab()
    tab.open(report.as_uri() + "#" + Anchor("talk-to-human").id())
    assert tab.value(f"document.getElementById('{Anchor('talk-to-human').id()}').cells[0].textContent") == (
        "talk-to-human"
    )
    assert tab.value(
        f"document.getElementById('{Anchor('talk-to-human').id()}').classList.contains('target')"
    )
    assert tab.value("document.querySelector('dialog.window').open") is True
    assert tab.value("document.querySelector('dialog.window h2').textContent") == "talk-to-human"
    whose = "[...document.querySelectorAll('#parties tbody tr:not(.empty)')].map(r => r.cells[0].textContent)"
    assert tab.value(whose) == ["the agent", "the judge"]
    assert tab.problems() == []
