"""The pass rate under staged play (decision 28, docs/gate.md): each scenario's estimate is exactly
unbiased at every rate — checked by enumerating every sequence of attempts of small designs, with
the rule written out here again — pass^k too and counts every scenario, the interval holds the
estimate, a fixed-repeat run sums up exactly as before, and the progress line says how many attempts
stages may still bring."""

from __future__ import annotations

import io
import itertools
from fractions import Fraction

import pytest

from convy.compare.comparison import Compared
from convy.compare.staged import Stages
from convy.compare.staged_rate import Reached, StagedRate
from convy.compare.statistics import Averaged, Share, Tally
from convy.compare.summary import Summary, Summed
from convy.conduct.stages import Staging
from convy.draw.blocks import MarkdownCells
from convy.draw.notes import RunNotes
from convy.draw.progress import Printed
from convy.play.outcome import ClaimResult, Outcome, Verdict
from convy.store.runfile import Against, RunFile, RunSpec, ScenarioEntry

Side = tuple[int, int, int]
"""One attempt, then to `repeat`, then to `most`."""


def played(bits: tuple[int, ...], side: Side, against: tuple[int, int]) -> tuple[Tally, ...]:
    """The stages the rule plays: stop after the first attempt when every attempt so far in both
    runs held or every one missed; stop at `repeat` unless at least one held and at most half did."""
    one, repeat, most = side
    held, judged = against
    stages = [Tally(held=bits[0], judged=1)]
    if held + bits[0] in (0, judged + 1):
        return tuple(stages)
    stages.append(Tally(held=sum(bits[1:repeat]), judged=repeat - 1))
    total = held + sum(bits[:repeat])
    if not (total >= 1 and 2 * total <= judged + repeat):
        return tuple(stages)
    stages.append(Tally(held=sum(bits[repeat:most]), judged=most - repeat))
    return tuple(stages)


def sequences(side: Side, against: tuple[int, int]) -> list[tuple[tuple[Tally, ...], int, int]]:
    """Every way the rule can play a scenario: its stages, and the attempts held and judged (each
    played sequence once)."""
    found = []
    for bits in itertools.product((0, 1), repeat=side[2]):
        stages = played(bits, side, against)
        length = sum(s.judged for s in stages)
        if any(bits[length:]):
            continue
        found.append((stages, sum(bits[:length]), length))
    return found


DESIGNS: tuple[Side, ...] = ((1, 2, 4), (1, 3, 5), (1, 3, 6), (1, 3, 9))
RATES = (Fraction(1, 20), Fraction(1, 5), Fraction(1, 2), Fraction(2, 3), Fraction(19, 20))


@pytest.mark.parametrize("side", DESIGNS)
def test_the_estimate_and_pass_k_are_exactly_unbiased_at_every_rate_and_baseline(side: Side) -> None:
    design = Stages.of(side[1], side[2])
    k = side[1]
    for base in range(4):
        against = (base, 3)
        ways = sequences(side, against)
        reached = [
            Reached(design=design, stages=stages, against=Tally(held=base, judged=3)) for stages, _, _ in ways
        ]
        for rate in RATES:
            chances = [rate**held * (1 - rate) ** (judged - held) for _, held, judged in ways]
            assert sum(chances) == 1
            mean = sum((c * r.estimate() for c, r in zip(chances, reached, strict=True)), start=Fraction(0))
            assert mean == rate, (side, base, rate)
            powers = sum(float(c) * r.pass_k(k) for c, r in zip(chances, reached, strict=True))
            assert powers == pytest.approx(float(rate**k), abs=1e-9), (side, base, rate)


def test_the_estimate_stays_unbiased_when_an_attempt_gets_no_verdict() -> None:
    """1 → 3 → 9 with the second attempt unjudged: the first stage judges 1, the second 1, the last 6."""
    design = Stages.of(3, 9)
    for base in range(4):
        ways = []
        for bits in itertools.product((0, 1), repeat=8):
            stages = [Tally(held=bits[0], judged=1)]
            if base + bits[0] not in (0, 4):
                stages.append(Tally(held=bits[1], judged=1))
                total = base + bits[0] + bits[1]
                if total >= 1 and 2 * total <= 3 + 2:
                    stages.append(Tally(held=sum(bits[2:]), judged=6))
            length = sum(s.judged for s in stages)
            if any(bits[length:]):
                continue
            ways.append(
                (
                    Reached(design=design, stages=tuple(stages), against=Tally(held=base, judged=3)),
                    bits[:length],
                )
            )
        for rate in RATES:
            mean = sum(
                (rate ** sum(b) * (1 - rate) ** (len(b) - sum(b)) * r.estimate() for r, b in ways),
                start=Fraction(0),
            )
            assert mean == rate, (base, rate)


def test_a_scenario_that_stopped_on_its_first_attempt_is_read_by_it() -> None:
    design = Stages.of(3, 9)
    held = Reached(design=design, stages=(Tally(held=1, judged=1),), against=Tally(held=3, judged=3))
    assert held.estimate() == 1 and held.settled() is True
    # against a baseline that always held, a scenario went on only after a miss: read as that miss
    missed = Reached(
        design=design,
        stages=(Tally(held=0, judged=1), Tally(held=2, judged=2)),
        against=Tally(held=3, judged=3),
    )
    assert missed.estimate() == 0
    # the share held, 2/3, would read it high; with a mixed baseline the first stage went on either way
    mixed = Reached(
        design=design,
        stages=(Tally(held=0, judged=1), Tally(held=2, judged=2)),
        against=Tally(held=1, judged=3),
    )
    assert mixed.estimate() == Fraction(2, 3)


def test_tallies_the_rule_cannot_have_made_are_read_by_their_share() -> None:
    design = Stages.of(3, 9)
    # went on after a first attempt that agreed with a baseline that always held: not the rule's
    odd = Reached(
        design=design,
        stages=(Tally(held=1, judged=1), Tally(held=1, judged=2)),
        against=Tally(held=3, judged=3),
    )
    assert odd.settled() is None and odd.estimate() == Fraction(2, 3)
    # a run stopped early, mid-stage: the stages so far follow the rule; the stop is not held against it
    early = Reached(
        design=design,
        stages=(Tally(held=0, judged=1), Tally(held=0, judged=1)),
        against=Tally(held=1, judged=3),
    )
    assert early.settled() is False and early.estimate() == 0


def test_the_interval_holds_the_estimate_and_stays_within_0_and_1() -> None:
    design = Stages.of(3, 9)
    scenarios = (
        Reached(design=design, stages=(Tally(held=1, judged=1),), against=Tally(held=3, judged=3)),
        Reached(design=design, stages=(Tally(held=0, judged=1),), against=Tally(held=0, judged=3)),
        Reached(stages=(Tally(held=2, judged=3),)),
    )
    rate = StagedRate(scenarios=scenarios).rate()
    assert not isinstance(rate, Share)
    assert rate.value == pytest.approx((1 + 0 + 2 / 3) / 3)
    assert 0 < rate.low < rate.value < rate.high < 1
    everything = StagedRate(scenarios=scenarios[:1] * 5).rate()
    assert everything.value == 1 and everything.high == 1 and everything.low < 1
    assert StagedRate(scenarios=()).share() is None


def attempts(said: dict[str, list[bool]]) -> list[Outcome]:
    return [
        Outcome(
            scenario=name,
            index=index,
            fingerprint="f",
            turns=(),
            seconds=1.0,
            decision=Verdict(holds=holds, claims=(ClaimResult(claim="c", passed=holds),)),
        )
        for name, held in said.items()
        for index, holds in enumerate(held)
    ]


def staged(said: dict[str, list[bool]], against: dict[str, tuple[int, int]]) -> Summary:
    spec = RunSpec(
        agent="a",
        repeat=3,
        max_repeat=9,
        stages=(1, 3, 9),
        baseline="a@t0",
        scenarios=tuple(
            ScenarioEntry(
                name=name,
                fingerprint="f",
                against=Against(held=against[name][0], judged=against[name][1]) if name in against else None,
            )
            for name in said
        ),
    )
    file = RunFile(format=2, spec=spec, status="finished", started="t1")
    return Summed(file, "results/a/r", attempts(said)).summary()


def test_a_staged_run_prints_and_floors_the_unbiased_rate_and_pass_k_counts_every_scenario() -> None:
    now = staged(
        {"solid": [True], "dead": [False], "turned": [False, True, True], "new": [True, True, False]},
        {"solid": (3, 3), "dead": (0, 3), "turned": (3, 3)},
    )
    # solid 1, dead 0, turned 0 (it went on only because its first attempt missed), new 2/3
    expected = (Fraction(1) + 0 + 0 + Fraction(2, 3)) / 4
    assert now.exact_rate() == expected
    assert now.rate.value == pytest.approx(float(expected))
    assert Averaged(tallies=tuple(s.tally for s in now.scenarios)).share() != expected, "not the shares' mean"
    # pass^3 counts every scenario: two stopped after one attempt that held, one after one that missed
    counted = staged(
        {"solid": [True], "sure": [True], "dead": [False], "new": [True, True, True]},
        {"solid": (3, 3), "sure": (3, 3), "dead": (0, 3)},
    )
    assert counted.pass_k == Share(value=0.75)
    assert sum(1 for s in counted.scenarios if isinstance(s.pass_k, Share)) == 1, "one has 3 judged"


def test_the_comment_says_how_a_staged_run_reads_its_pass_rate() -> None:
    said = {"solid": [True, True, True], "dead": [False, False, False]}
    spec = RunSpec(agent="a", repeat=3, scenarios=tuple(ScenarioEntry(name=n, fingerprint="f") for n in said))
    before = Summed(
        RunFile(format=2, spec=spec, status="finished", started="t0"), "results/a/b", attempts(said)
    ).summary()
    now = staged({"solid": [True], "dead": [False]}, {"solid": (3, 3), "dead": (0, 3)})
    comparison = Compared(now, before).comparison()
    notes = " ".join(RunNotes(comparison, MarkdownCells()).notes())
    assert "played by stages" in notes and "does not bias the pass rate" in notes


def test_a_fixed_repeat_run_sums_up_exactly_as_before() -> None:
    said = {"a": [True, True, False], "b": [True, False, False], "c": [True, True], "d": [False]}
    spec = RunSpec(agent="a", repeat=3, scenarios=tuple(ScenarioEntry(name=n, fingerprint="f") for n in said))
    now = Summed(
        RunFile(format=2, spec=spec, status="finished", started="t1"), "results/a/r", attempts(said)
    ).summary()
    averaged = Averaged(
        tallies=(
            Tally(held=2, judged=3),
            Tally(held=1, judged=3),
            Tally(held=2, judged=2),
            Tally(held=0, judged=1),
        )
    )
    assert now.rate == averaged.rate() and now.exact_rate() == averaged.share()
    # pass^3 leaves out the scenarios with fewer than 3 judged, as it always did
    assert now.pass_k == Share(value=(0 + 0) / 2)
    even = {"a": [True, True, False], "b": [True, True, True]}
    spec = RunSpec(agent="a", repeat=3, scenarios=tuple(ScenarioEntry(name=n, fingerprint="f") for n in even))
    run = Summed(
        RunFile(format=2, spec=spec, status="finished", started="t1"), "results/a/r", attempts(even)
    ).summary()
    assert run.rate == Tally(held=5, judged=6).rate() and run.rate.text() == "83.3% (43.6–97.0%)"
    assert run.pass_k == Share(value=(0 + 1) / 2)


def test_the_progress_line_says_up_to_how_many_attempts_while_stages_may_add_some() -> None:
    stream = io.StringIO()
    printed = Printed(2, stream, live=True, most=18)
    printed.record(Outcome(scenario="s", index=0, fingerprint="f", turns=(), seconds=0.5, decision=HELD))
    assert "1/2 done (up to 18 attempts) · 1 held" in stream.getvalue()
    printed.record(Outcome(scenario="t", index=0, fingerprint="f", turns=(), seconds=0.5, decision=HELD))
    printed.more(2, 2)  # the last stage: nothing more can come
    printed.record(Outcome(scenario="t", index=1, fingerprint="f", turns=(), seconds=0.5, decision=HELD))
    assert stream.getvalue().rsplit("\r", 1)[-1].startswith("\x1b[2K3/4 done · 3 held")
    ci = io.StringIO()
    logged = Printed(2, ci, live=False, most=18)
    logged.record(Outcome(scenario="s", index=0, fingerprint="f", turns=(), seconds=0.5, decision=HELD))
    assert ci.getvalue().startswith("[1/2 (up to 18 attempts)] s #1: held")
    plain = io.StringIO()
    Printed(2, plain, live=False).record(
        Outcome(scenario="s", index=0, fingerprint="f", turns=(), seconds=0.5, decision=HELD)
    )
    assert plain.getvalue().startswith("[1/2] s #1: held"), "a fixed repeat's line is as it was"


HELD = Verdict(holds=True, claims=(ClaimResult(claim="c", passed=True),))


def test_staging_counts_the_most_attempts_the_stages_may_still_play() -> None:
    entries = (
        ScenarioEntry(name="solid", fingerprint="f", against=Against(held=3, judged=3)),
        ScenarioEntry(name="shaky", fingerprint="f", against=Against(held=1, judged=3)),
        ScenarioEntry(name="new", fingerprint="f"),
    )
    undecided = RunSpec(agent="a", repeat=3, max_repeat=9, scenarios=entries)
    assert Staging(undecided).left(()) == 3 * 9, "before the stages are decided, each may get max-repeat"
    spec = RunSpec(agent="a", repeat=3, max_repeat=9, scenarios=entries, stages=(1, 3, 9), baseline="a@t0")
    first = attempts({"solid": [True], "shaky": [True], "new": [True, True, True]})
    # solid stopped at 1 (all held in both runs); shaky may go to 9; new plays its 3
    assert Staging(spec).left(first) == 8
