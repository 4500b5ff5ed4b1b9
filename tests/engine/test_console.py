"""What a terminal shows of a comparison: the verdict, the pass rates, the regressions, in plain
tables — and nothing an agent wrote can colour the terminal or start a workflow command."""

from __future__ import annotations

import re

from convy.compare.comparison import NoBaseline
from convy.compare.gate import Gate
from convy.draw.console import ConsoleText, TerminalCells
from tests.support.summaries import A_DROP, judged, run


def console(*args: object) -> str:
    comparison, decision = judged(*args)  # type: ignore[arg-type]
    return ConsoleText(comparison, decision).text()


def test_the_console_shows_the_verdict_the_pass_rates_and_the_regressions() -> None:
    text = console(*A_DROP, Gate(min_pass_rate=0.95, alpha=0.25))
    first = text.splitlines()[0]
    assert first == "convy: FAIL · support"
    assert "Pass rate 77.8% (45.3–93.7%) now, 100.0% (70.1–100.0%) in the baseline" in text
    assert (
        "Decided by min-pass-rate: pass rate 77.8% (45.3–93.7%) is under min-pass-rate 95.0%; "
        "commonest: failed claims ×2: judge: It never asked for the order number." in text
    )
    regressions = text.split("What failed (1)\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(regressions) == 2 + 1
    assert re.match(
        r"refund +1/3 +3/3 +p = 0.2 +The agent asks for the order number\. \(2 of 3 failed\)", regressions[2]
    )
    assert "It never asked for the order number." in regressions[2]
    every = text.split("All 3 scenarios\n", 1)[1].splitlines()
    assert len(every) == 2 + 3 and every[2].startswith("regressed  refund")
    assert "|" not in text and "<details>" not in text and "**" not in text


def test_the_console_follows_the_verdict_and_says_when_there_is_no_baseline() -> None:
    assert console(*A_DROP).splitlines()[0] == "convy: PASS · support"
    text = console(run({"s": [None, None, True]}), NoBaseline(why="no earlier run"))
    assert text.splitlines()[0] == "convy: INCONCLUSIVE · support"
    assert "now; no baseline (no earlier run): the gate decided on the floor only." in text
    assert "What failed (0)\nNo scenario failed or fell." in text
    assert re.search(r"median judge tokens +unknown\n", text)


def test_agent_text_cannot_reach_the_terminal_or_the_log() -> None:
    hostile = "::error::owned\n##[group]x\r\x1b[31mred\x1b[0m\x07\u202eevil"
    now = run({hostile: [True, False, False]}, claim=hostile, reason=hostile, agent="::warning::x")
    text = console(now, run({hostile: [True] * 3}, agent="::warning::x"))
    assert not any(c in text for c in "\x1b\x07\r\u202e")
    for line in text.splitlines():
        assert not line.strip().startswith(("::", "##["))
    assert "red" in text and "owned" in text


def test_a_long_text_is_cut_to_one_line() -> None:
    cells = TerminalCells()
    assert cells.cell("a\n\nb   c\t d", 100) == "a b c d"
    cut = cells.cell("x" * 100_000, 50)
    assert len(cut) == 50 and cut.endswith("…")
