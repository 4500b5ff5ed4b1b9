"""Why it changed in headless Chromium: the comment's link to `comparison.html#diff-…` opens the
scenario's side-by-side block with scripts blocked; the two attempts are in two columns on a wide
screen and stacked at 400 px, nothing wider than the screen."""

from __future__ import annotations

from pathlib import Path

import pytest

from convy.draw.anchor import Anchor
from tests.browser.chromium import Chromium, Tab
from tests.support.page_scripts import WIDEST
from tests.support.side_by_side import BEFORE, NOW, page

BLOCK = f"document.getElementById({Anchor('refund-late-order').diff()!r})"
CELLS = f"""(() => {{
  const row = {BLOCK}.querySelector('.turn-pair.first-difference');
  return [...row.querySelectorAll(':scope > .cell')].map(c => {{
    const r = c.getBoundingClientRect();
    return {{left: r.left, right: r.right, top: r.top, bottom: r.bottom}};
  }});
}})()"""
SHOWN = "(n => !!n && n.checkVisibility() && n.getBoundingClientRect().height > 0)"


@pytest.fixture(scope="module")
def comparison(tmp_path_factory: pytest.TempPathFactory) -> Path:
    html, _ = page(BEFORE, NOW)
    path = tmp_path_factory.mktemp("sidebyside") / "comparison.html"
    path.write_text(html, encoding="utf-8")
    return path


def opened(browser: Chromium, path: Path, width: int, address: str, scripts: bool = True) -> Tab:
    tab = browser.tab()
    if not scripts:
        tab.without_scripts()
    tab.viewport(width)
    tab.open(path.as_uri() + address)
    return tab


@pytest.mark.parametrize("scripts", [True, False])
def test_the_comment_s_link_opens_the_block_with_or_without_scripts(
    browser: Chromium, comparison: Path, scripts: bool
) -> None:
    closed = opened(browser, comparison, 1280, "", scripts)
    assert closed.value(f"{SHOWN}({BLOCK})") is True
    assert closed.value(f"{SHOWN}({BLOCK}.querySelector('.sides'))") is False, "closed until named"
    tab = opened(browser, comparison, 1280, "#" + Anchor("refund-late-order").diff(), scripts)
    assert tab.value(f"{SHOWN}({BLOCK}.querySelector('.sides'))") is True
    assert tab.value(f"{SHOWN}({BLOCK}.querySelector('.first-difference del'))") is True
    assert tab.value(f"{BLOCK}.querySelector('.first-difference ins').textContent") == "store credit"
    assert tab.problems() == []


def test_the_two_attempts_are_side_by_side_on_a_wide_screen(browser: Chromium, comparison: Path) -> None:
    tab = opened(browser, comparison, 1280, "#" + Anchor("refund-late-order").diff())
    before, after = tab.value(CELLS)
    assert before["top"] == after["top"] and after["left"] >= before["right"]
    assert after["right"] - before["left"] > 900, "the two columns fill the block"


def test_at_400_px_the_two_attempts_stack_and_nothing_is_wider_than_the_screen(
    browser: Chromium, comparison: Path
) -> None:
    tab = opened(browser, comparison, 400, "#" + Anchor("refund-late-order").diff(), scripts=False)
    assert tab.value("innerWidth") == 400
    before, after = tab.value(CELLS)
    assert after["top"] >= before["bottom"] and after["left"] == before["left"]
    assert tab.value(f"{SHOWN}({BLOCK}.querySelector('.side-tag'))") is True, "each cell says its side"
    widest = tab.value(WIDEST)
    assert widest["page"] <= 400 and widest["wide"] == [], widest
    assert tab.problems() == []
