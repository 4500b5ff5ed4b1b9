"""The tables of the console and the comment drawn without tabulate (convy.draw.columns) are the
tables tabulate draws, character for character, whatever the cells hold."""

from __future__ import annotations

import subprocess
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tabulate import tabulate

from convy.draw.columns import Narrow, TextTable

CELLS = st.text(
    alphabet=st.one_of(
        st.characters(min_codepoint=0x20, max_codepoint=0x7E),
        st.sampled_from("…—–·±×≤≥κ✓✗→€é ü\t\n\x1b漢😀\u0301\u200b\u2630⚡"),
    ),
    max_size=12,
)


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[str], list[list[str]]]:
    width = draw(st.integers(min_value=1, max_value=4))
    headers = draw(st.lists(CELLS, min_size=width, max_size=width))
    rows = draw(st.lists(st.lists(CELLS, min_size=width, max_size=width), max_size=5))
    return headers, rows


@pytest.mark.parametrize("style", ["simple", "github"])
@settings(max_examples=300, deadline=None)
@given(table=tables())
def test_a_table_is_drawn_as_tabulate_draws_it(style: str, table: tuple[list[str], list[list[str]]]) -> None:
    headers, rows = table
    drawn = TextTable(tuple(headers), tuple(map(tuple, rows)), style).text()
    assert drawn == tabulate(rows, headers=headers, tablefmt=style, disable_numparse=True)


def test_a_plain_table_is_drawn_without_tabulate() -> None:
    drawing = (
        "import sys\n"
        "from convy.draw.columns import TextTable\n"
        "rows = (('s001-refund', '100.0% (20.7–100.0%)'), ('… 3 more', ''))\n"
        "sys.stdout.write(TextTable(('scenario', 'pass rate'), rows, 'github').text())\n"
        "assert 'tabulate' not in sys.modules and 'wcwidth' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", drawing], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        "| scenario    | pass rate            |",
        "|-------------|----------------------|",
        "| s001-refund | 100.0% (20.7–100.0%) |",
        "| … 3 more    |                      |",
    ]


def test_every_character_taken_as_one_column_is_one_column_to_wcwidth() -> None:
    wcwidth = pytest.importorskip("wcwidth")
    narrow = Narrow()
    wrong = [
        hex(code)
        for code in range(0x20, 0x30000)
        if not 0xD800 <= code < 0xE000 and narrow.character(chr(code)) and wcwidth.wcwidth(chr(code)) != 1
    ]
    assert wrong == []
    assert not narrow.character("\u0301") and unicodedata.combining("\u0301")
