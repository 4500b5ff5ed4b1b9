"""Counts said with their noun agreeing: "1 turn", "2 turns", never "1 turns"."""

from __future__ import annotations

import io

from convy.draw.progress import Printed
from convy.play.outcome import Failed, Outcome, Turn
from convy.words import Plural


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert [Plural(n, "attempt").text() for n in (0, 1, 2, 1200)] == [
        "0 attempts",
        "1 attempt",
        "2 attempts",
        "1,200 attempts",
    ]
    assert Plural(1, "reply", "replies").word == "reply" and Plural(3, "reply", "replies").word == "replies"


def test_progress_says_1_turn() -> None:
    out = io.StringIO()
    shown = Printed(2, out, False)
    turn = Turn(user="u", agent="a", seconds=0.1)
    for index, turns in enumerate(((turn,), (turn, turn))):
        shown.record(
            Outcome(
                scenario="s",
                index=index,
                fingerprint="f",
                turns=turns,
                seconds=0.2,
                decision=Failed(reason="x"),
            )
        )
    assert "(1 turn, 0.2 s)" in out.getvalue() and "(2 turns, 0.2 s)" in out.getvalue()


def test_a_flag_whose_description_gives_its_default_says_it_once() -> None:
    import subprocess
    import sys

    shown = subprocess.run(
        [sys.executable, "-m", "convy", "run", "--help"], capture_output=True, text=True
    ).stdout
    flat = " ".join(shown.split())
    assert "(default: `repeat`, which turns it off)" in flat
    assert "turns it off) (default: 0)" not in flat


def test_a_long_message_is_cut_at_a_word_with_an_ellipsis() -> None:
    from convy.words import Shortened

    said = "The model `judge-x` does not exist or you do not have access to it. " * 10
    shown = Shortened(said, 60).shown()
    assert len(shown) <= 60 and shown.endswith("…") and not shown.endswith(".…")
    assert said.startswith(shown.removesuffix("…")) and said[len(shown) - 1] == " ", "cut before a word"
    assert Shortened("short enough.", 60).shown() == "short enough."
