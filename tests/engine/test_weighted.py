"""The pass rate, the drop and the floor weigh every scenario the same (decision 27): with different
numbers of judged attempts per scenario they are the mean of the scenarios' shares, with Wilson's
interval at the effective number of attempts; with the same number they are exactly the pooled
figures of before; nothing-held, max-failed and max-no-verdict still count attempts."""

from __future__ import annotations

import random
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import msgspec
import pytest
from statsmodels.stats.proportion import proportion_confint

from convy.compare.comparison import Compared, NoBaseline
from convy.compare.gate import Gate
from convy.compare.statistics import Averaged, Rate, Tally, Unknown, Wilson
from convy.draw.blocks import MarkdownCells
from convy.draw.notes import RunNotes
from tests.support.weighted import held, run


def tally(count: int, of: int) -> Tally:
    return Tally(held=count, judged=of)


def test_unequal_attempts_give_the_mean_of_the_scenarios_shares() -> None:
    # 3/3 and 1/6: pooled would be 4/9 (44.4%), the mean of the shares is (1 + 1/6) / 2 = 7/12
    now = run({"easy": held(3, 3), "hard": held(1, 6)}, max_repeat=6)
    assert now.exact_rate() == Fraction(7, 12)
    assert isinstance(now.rate, Rate) and now.rate.value == float(Fraction(7, 12))
    assert now.averaged
    assert (now.tally.held, now.tally.judged) == (4, 9), "the counts stay counts"


def test_a_scenario_with_nothing_judged_is_left_out_of_the_mean() -> None:
    now = run({"a": held(2, 3), "unjudged": [None, None, None], "b": held(1, 6)}, max_repeat=6)
    assert now.exact_rate() == (Fraction(2, 3) + Fraction(1, 6)) / 2
    assert Averaged(tallies=(tally(0, 0), tally(0, 0))).share() is None
    assert isinstance(Averaged(tallies=(tally(0, 0),)).rate(), Unknown)


def test_the_interval_of_a_mean_is_wilson_at_the_effective_number_of_attempts() -> None:
    averaged = Averaged(tallies=(tally(3, 3), tally(1, 6)))
    # k² / Σ 1/n_i = 4 / (1/3 + 1/6) = 8 attempts
    assert averaged.size() == 8
    rate = averaged.rate()
    assert isinstance(rate, Rate)
    low, high = proportion_confint(7 / 12 * 8, 8, alpha=0.05, method="wilson")
    assert (rate.low, rate.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert rate.low < 7 / 12 < rate.high
    # a share of 0 or 1 keeps its bound exactly, and the other bound is not the share itself
    nothing = Averaged(tallies=(tally(0, 3), tally(0, 6))).rate()
    assert isinstance(nothing, Rate) and nothing.low == 0.0 and nothing.high > 0.2
    every = Averaged(tallies=(tally(3, 3), tally(6, 6))).rate()
    assert isinstance(every, Rate) and every.high == 1.0 and every.low < 0.8


def test_equal_attempts_give_exactly_the_pooled_figures() -> None:
    rng = random.Random(27)
    for _ in range(300):
        n = rng.randint(1, 9)
        tallies = tuple(tally(rng.randint(0, n), n) for _ in range(rng.randint(1, 12)))
        tallies += (tally(0, 0),) * rng.randint(0, 2)
        averaged = Averaged(tallies=tallies)
        pooled = averaged.pooled()
        assert averaged.even()
        assert averaged.share() == Fraction(pooled.held, pooled.judged)
        assert averaged.size() == pooled.judged
        assert averaged.rate() == pooled.rate()
        # and Wilson at the effective number gives the very same floats
        share = averaged.share()
        assert share is not None
        assert Wilson(share=float(share), size=float(averaged.size())).rate() == pooled.rate()


def test_equal_attempts_give_the_runs_figures_of_before() -> None:
    before = run({"s": held(3, 3), "t": held(1, 3), "u": held(0, 3)})
    now = run({"s": held(2, 3), "t": held(1, 3), "u": held(0, 3)})
    assert not now.averaged and not before.averaged
    assert now.rate == now.tally.rate() and now.exact_rate() == Fraction(3, 9)
    comparison = Compared(now, before).comparison()
    assert not comparison.averaged
    assert comparison.exact_drop() == Fraction(4, 9) - Fraction(3, 9)
    assert comparison.drop == float(Fraction(1, 9))
    assert msgspec.json.encode(comparison)


def test_the_drop_weighs_every_common_scenario_the_same_in_both_runs() -> None:
    # baseline 3 attempts each; now the hard scenario got 6
    before = run({"easy": held(3, 3), "hard": held(1, 3), "changed": held(0, 3)})
    now = run({"easy": held(3, 3), "hard": held(1, 6), "changed": held(3, 3)}, max_repeat=6)
    now = msgspec.structs.replace(
        now,
        scenarios=tuple(
            msgspec.structs.replace(s, fingerprint="g") if s.name == "changed" else s for s in now.scenarios
        ),
    )
    comparison = Compared(now, before).comparison()
    # (1 + 1/3)/2 − (1 + 1/6)/2 = 1/12; pooled it would be 4/6 − 4/9 = 2/9
    assert comparison.exact_drop() == Fraction(1, 12)
    assert comparison.drop == float(Fraction(1, 12))
    assert comparison.averaged
    assert (comparison.common_now.held, comparison.common_now.judged) == (4, 9)
    assert (comparison.common_baseline.held, comparison.common_baseline.judged) == (4, 6)
    assert msgspec.json.encode(comparison)


def test_no_change_with_adaptive_repeats_shows_no_drop() -> None:
    before = run({"easy": held(3, 3), "hard": held(1, 3)})
    now = run({"easy": held(3, 3), "hard": held(2, 6)}, max_repeat=6)
    comparison = Compared(now, before).comparison()
    assert comparison.exact_drop() == 0
    decision = Gate(min_pass_rate=0.5).decision(comparison)
    assert (decision.verdict, decision.rule) == ("pass", "within-max-drop")


def test_the_floor_compares_the_mean_of_the_scenarios_shares() -> None:
    floor = Gate(min_pass_rate=0.5)
    # pooled 4/9 is under the floor; the mean (1 + 1/6)/2 = 7/12 is not
    above = run({"easy": held(3, 3), "hard": held(1, 6)}, max_repeat=6)
    decision = floor.decision(Compared(above, NoBaseline()).comparison())
    assert (decision.verdict, decision.rule) == ("pass", "floor-only")
    # pooled 5/9 is over the floor; the mean (0 + 5/6)/2 = 5/12 is under it
    under = run({"broken": held(0, 3), "fine": held(5, 6)}, max_repeat=6)
    decision = floor.decision(Compared(under, NoBaseline()).comparison())
    assert (decision.verdict, decision.rule) == ("fail", "min-pass-rate")
    assert "averaged over scenarios" in decision.explanation and "41.7%" in decision.explanation
    # exactly on the floor is not under it: (2/3 + 2/6)/2 = 1/2, where pooled 4/9 would fail
    edge = run({"a": held(2, 3), "b": held(2, 6)}, max_repeat=6)
    assert edge.exact_rate() == Fraction(1, 2)
    assert floor.decision(Compared(edge, NoBaseline()).comparison()).rule == "floor-only"


def test_the_attempt_rules_still_count_attempts() -> None:
    # 1 failed of 10 attempts is not more than max-failed 0.1, though the mean of the scenarios'
    # failed shares (1/3 + 0)/2 would be
    now = run({"a": ["timeout", True, True], "b": [True] * 7}, max_repeat=7)
    assert now.averaged
    assert Gate(max_failed=0.1).decision(Compared(now, NoBaseline()).comparison()).rule == "floor-only"
    assert Gate(max_failed=0.09).decision(Compared(now, NoBaseline()).comparison()).rule == "max-failed"
    # 2 of 10 attempts without verdict is not more than max-no-verdict 0.2, whichever scenario they are in
    unjudged = run({"a": [None, None, True], "b": [True] * 7}, max_repeat=7)
    assert unjudged.averaged
    assert (
        Gate(max_no_verdict=0.2).decision(Compared(unjudged, NoBaseline()).comparison()).rule == "floor-only"
    )
    # nothing held is nothing held, however the attempts fall
    none = run({"a": held(0, 3), "b": held(0, 6)}, max_repeat=6)
    assert Gate().decision(Compared(none, NoBaseline()).comparison()).rule == "nothing-held"


def test_the_comment_says_when_the_pass_rate_is_averaged() -> None:
    before = run({"easy": held(3, 3), "hard": held(1, 3)})
    adaptive = run({"easy": held(3, 3), "hard": held(2, 6)}, max_repeat=6)
    fixed = run({"easy": held(3, 3), "hard": held(1, 3)})
    notes = []
    for now in (adaptive, fixed):
        comparison = Compared(now, before).comparison()
        notes.append(" ".join(RunNotes(comparison, MarkdownCells()).notes()))
    assert "averaged over scenarios" in notes[0]
    assert "averaged" not in notes[1]


def test_the_simulation_of_the_floor_no_longer_fails_unchanged_runs() -> None:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "adaptive.py"), "--floor", "--pairs", "300"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    rows = [line.split("|")[1:-1] for line in done.stdout.splitlines() if line.startswith("| 10 at 0.9")]
    assert [row[1].strip() for row in rows] == [
        "fixed repeat 3",
        "two rounds 3 → 6 (decision 17)",
        "staged 1 → 3 → 9 (decision 28)",
        "staged with a floor, 3 → 9",
    ]
    # a run with a floor starts its stages at repeat: its floor fails no more than fixed repeat 3's
    # (about 0.015 here), where stages from 1 fail about 0.08 (decision 28)
    for row, most in zip(rows[1:], (0.06, 0.12, 0.05), strict=True):
        floor_fails, mean_drop = float(row[2]), float(row[3])
        # pooled over attempts these were about 0.34 and +8.4 points with two rounds; staged, the
        # rate is unbiased but reads a scenario that stopped after one attempt from it (decision 28)
        assert floor_fails < most
        assert abs(mean_drop) < 2.0
