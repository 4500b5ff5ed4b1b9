"""Time to first token (docs/agents.md): each streamed turn records `first`; the summary keeps their
spread, the comment's metrics and the report's tiles show the median — and say nothing of it when
no turn was streamed (an unknown figure is never drawn as 0)."""

from __future__ import annotations

from convy.compare.comparison import NO_BASELINE, Compared
from convy.compare.gate import Gate
from convy.compare.summary import Summary, Summed
from convy.draw.markdown import CommentMarkdown
from convy.draw.shown import ShownRun
from convy.play.outcome import ClaimResult, Outcome, Turn, Verdict
from convy.store.runfile import RunFile, RunSpec, ScenarioEntry

HELD = Verdict(holds=True, claims=(ClaimResult(claim="c", passed=True, reason="ok"),))


def summary(firsts: list[float | None]) -> Summary:
    """A run of one scenario whose attempt i has one turn with `first` = firsts[i]."""
    outcomes = [
        Outcome(
            scenario="s",
            index=index,
            fingerprint="f",
            turns=(Turn(user="u", agent="a", seconds=2.0, first=first),),
            seconds=3.0,
            decision=HELD,
        )
        for index, first in enumerate(firsts)
    ]
    spec = RunSpec(
        agent="support",
        repeat=len(firsts),
        scenarios=(ScenarioEntry(name="s", fingerprint="f", line=1, claim_lines=(3,)),),
    )
    return Summed(RunFile(format=2, spec=spec, status="finished", started="t"), "r", outcomes).summary()


def comment(now: Summary, baseline: Summary | None = None) -> str:
    gate = Gate()
    comparison = Compared(now, baseline if baseline is not None else NO_BASELINE, gate.alpha).comparison()
    return CommentMarkdown(comparison, gate.decision(comparison)).text()


def test_the_median_of_the_streamed_turns_only() -> None:
    s = summary([0.25, None, 0.75, 0.5])
    assert s.first_seconds.count == 3
    assert s.first_seconds.median == 0.5
    assert s.turn_seconds.count == 4


def test_the_comment_shows_the_median_time_to_first_token_when_a_turn_streamed() -> None:
    text = comment(summary([0.25, 0.5, 0.75]))
    assert "median time to first token" in text
    assert "0.5" in text.split("median time to first token", 1)[1].split("\n", 1)[0]


def test_the_comment_and_the_report_say_nothing_of_it_when_nothing_streamed() -> None:
    plain = summary([None, None])
    assert plain.first_seconds.count == 0
    assert "first token" not in comment(plain)
    assert not [tile for tile in ShownRun(summary=plain).tiles() if "first token" in tile.label]


def test_the_report_has_a_tile_with_the_median() -> None:
    tiles = [
        tile for tile in ShownRun(summary=summary([1.0, 2.0, 3.0])).tiles() if "first token" in tile.label
    ]
    assert len(tiles) == 1
    assert tiles[0].value.startswith("2")


def test_the_comparison_shows_the_baseline_s_too_when_only_it_streamed() -> None:
    text = comment(summary([None, None]), summary([0.5, 0.5]))
    assert "time to first token" in text
