"""The failing pull request's first screen (docs/comment.md): what failed comes before the first
collapsed section whatever rule decided, worst first, at most 5 then "and N more"; a scenario that
fell under a significant pooled drop is never "within noise"; the words; every table of the comment
within a phone's column (a wider one drawn as a list)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from convy.compare.comparison import Compared, NoBaseline
from convy.compare.gate import Gate
from convy.demo.localserver import LocalServer
from convy.draw.blocks import GroupedTable, MarkdownCells
from convy.draw.markdown import CommentMarkdown
from convy.draw.notes import RunNotes
from convy.draw.untrusted import Untrusted
from convy.draw.width import COLUMN, TableWidth
from convy.words import Sentence
from tests.support.command import convy, only_run
from tests.support.weighted import held, run

Triple = tuple[int, dict[str, str], bytes]

LONG = "refund-for-a-late-international-order-with-a-damaged-box"


def first_screen(comment: str) -> str:
    """The part of a comment before its first collapsed section."""
    return comment.split("<details>", 1)[0]


def tables(comment: str) -> list[list[tuple[str, ...]]]:
    """Every markdown table of a comment, as rows of cells (the header first, the rule left out)."""
    found = []
    for block in re.findall(r"((?:^\|.*\|\n)+)", comment, re.M):
        rows = [tuple(c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]) for line in block.splitlines()]
        found.append([rows[0], *rows[2:]])
    return found


def test_a_regression_decided_by_nothing_held_names_the_scenarios_first(tmp_path: Path) -> None:
    """Every scenario from 3/3 to 0/3: at repeat 3 none is significant on its own, yet the first
    screen names them with their failing claims, and none is called within noise."""
    answer = {"text": "Sure, I can refund that order now."}

    def answered(method: str, path: str, headers: dict[str, str], body: bytes) -> Triple:
        said = {"choices": [{"message": {"role": "assistant", "content": answer["text"]}}]}
        return 200, {"Content-Type": "application/json"}, json.dumps(said).encode()

    (tmp_path / "scenarios").mkdir()
    for i in range(7):
        (tmp_path / "scenarios" / f"s{i}.yaml").write_text(
            f"name: {LONG}-{i}\nturns: [My order is late, Refund it]\n"
            "checks: [{contains: refund}, {not_contains: hold}]\n"
        )
    with LocalServer(answered) as server:
        url = f"{server.url}/chat"
        first = convy("run", "--agent-url", url, "--repeat", "3", cwd=tmp_path)
        assert first.returncode == 0, first.stdout + first.stderr
        baseline = only_run(tmp_path / "results")
        answer["text"] = "Please hold on."
        done = convy("run", "--agent-url", url, "--repeat", "3", "--baseline", str(baseline), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    folder = max((p for p in (tmp_path / "results").glob("*/*") if p != baseline), key=lambda p: p.name)
    comment = (folder / "comment.md").read_text()
    screen = first_screen(comment)
    assert "Decided by `nothing-held`" in screen
    assert "### What failed (7)" in screen
    named = re.findall(rf"\*\*({LONG}-\d)\*\*", screen)
    assert named == [f"{LONG}-{i}" for i in range(5)], "at most 5, in the comparison's order at equal falls"
    assert "- and 2 more" in screen
    assert screen.count("contains 'refund' — failed 3 of 3") == 5, "each with its failing claims"
    assert "within noise" not in comment and "within noise" not in done.stdout
    assert "lower, not significant on its own" in screen
    assert "What failed (7)" in done.stdout


def test_worst_first_the_largest_fall_then_the_lowest_share() -> None:
    before = run({"a": held(3, 3), "b": held(3, 3), "c": held(2, 3), "d": held(3, 3)})
    now = run({"a": held(2, 3), "b": held(0, 3), "c": held(2, 3), "d": held(3, 3)})
    comparison = Compared(now, before).comparison()
    decision = Gate(min_pass_rate=0.99).decision(comparison)
    assert decision.verdict == "fail"
    assert [s.name for s in decision.failed_first(comparison)] == ["b", "a", "c"], "d held every attempt"
    comment = CommentMarkdown(comparison, decision).text()
    assert re.findall(r"\*\*([abcd])\*\*", first_screen(comment)) == ["b", "a", "c"]


def test_a_failing_floor_without_a_baseline_names_the_scenarios_that_did_not_hold() -> None:
    now = run({"fine": held(3, 3), "bad": held(0, 3), "half": held(2, 3)})
    comparison = Compared(now, NoBaseline()).comparison()
    decision = Gate(min_pass_rate=0.9).decision(comparison)
    assert decision.rule == "min-pass-rate"
    screen = first_screen(CommentMarkdown(comparison, decision).text())
    assert re.findall(r"\*\*(fine|bad|half)\*\*", screen) == ["bad", "half"]
    assert "c — failed 3 of 3" in screen


def test_a_passing_run_keeps_its_regressions_heading() -> None:
    now = run({"a": held(3, 3), "b": held(2, 3)})
    comparison = Compared(now, run({"a": held(3, 3), "b": held(3, 3)})).comparison()
    decision = Gate(max_drop=0.5).decision(comparison)
    assert decision.verdict == "pass"
    comment = CommentMarkdown(comparison, decision).text()
    assert "What failed" not in comment and "Lower than the baseline, within noise (1)" in comment


def test_no_punctuation_of_the_sentence_inside_a_code_span() -> None:
    said = Untrusted(text="HTTP 404 from http://127.0.0.1:9/chat; check agent-url (see http://x.io/a).").line(
        200
    )
    assert said == "HTTP 404 from `http://127.0.0.1:9/chat`; check agent-url (see `http://x.io/a`)."
    assert Untrusted(text="at http://x.io/?q=1").line(200) == "at `http://x.io/?q=1`"


def test_a_sentence_never_ends_in_a_question_and_a_full_stop() -> None:
    assert Sentence("did you mean `reply.text`?").text() == "did you mean `reply.text`?"
    assert Sentence("it stopped").text() == "it stopped."


def test_the_averaged_note_needs_something_judged_now() -> None:
    before = run({"easy": held(3, 3), "hard": held(1, 6)}, max_repeat=6)
    nothing = run({"easy": [None, None, None], "hard": [None, None, None]})
    notes = " ".join(RunNotes(Compared(nothing, before).comparison(), MarkdownCells()).notes())
    assert "averaged" not in notes
    judged = run({"easy": held(3, 3), "hard": held(2, 6)}, max_repeat=6)
    assert "averaged over scenarios" in " ".join(
        RunNotes(Compared(judged, before).comparison(), MarkdownCells()).notes()
    )


def test_a_table_wider_than_a_phone_becomes_a_list() -> None:
    narrow = GroupedTable(
        headers=("", "now"), groups=((("pass rate", "50.0%"),),), noun="figures", style="github"
    )
    assert narrow.text().startswith("|")
    rows = tuple((("lower", f"{LONG}-{i}", "0/3", "3/3", "p = 0.05"),) for i in range(3))
    wide = GroupedTable(
        headers=("status", "scenario", "now", "baseline", "p"),
        groups=rows,
        noun="scenarios",
        style="github",
        bare=2,
    )
    listed = wide.text()
    assert "|" not in listed
    assert listed.splitlines()[0] == f"- **lower** · {LONG}-0 · now 0/3 · baseline 3/3 · p = 0.05"
    assert wide.text(1).splitlines()[-1] == "- … 2 more scenarios"
    console = GroupedTable(headers=wide.headers, groups=rows, noun="scenarios", style="simple")
    assert "scenario" in console.text().splitlines()[0], "the console keeps its tables"


def test_every_table_of_a_many_scenario_comment_fits_a_phone() -> None:
    names = {f"{LONG}-{i}": held(i % 4, 3) for i in range(12)}
    comparison = Compared(run(names), run({name: held(3, 3) for name in names})).comparison()
    comment = CommentMarkdown(comparison, Gate().decision(comparison)).text()
    found = tables(comment)
    assert found, "the headline figures stay a table"
    for table in found:
        assert TableWidth(table[0], tuple(table[1:])).pixels() <= COLUMN, table[0]
    assert f"- **regressed** · {LONG}-0" in comment or f"- **lower** · {LONG}-0" in comment


def test_the_width_is_on_the_wide_side_of_what_chromium_drew() -> None:
    """Figures measured by benchmarks/comment_width.py: a table drawn 327 px and one 482 px wide."""
    headline = (
        ("", "now", "baseline"),
        ("95% interval", "0.0–24.2%", "75.8–100.0%"),
        ("pass^k", "0.0% (k = 3)", "100.0% (k = 3)"),
    )
    assert 327 <= TableWidth(headline[0], headline[1:]).pixels() <= 350
