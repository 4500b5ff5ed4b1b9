"""Staged repeats: the test that reads a run played by stages is exact — its distribution is the
conditional one the stages' decisions give, checked against brute-force enumeration of every way the
attempts of both runs could have fallen (the rule written out here again, not taken from the code),
so the false-alarm rate stays at or under alpha."""

from __future__ import annotations

import itertools
from fractions import Fraction

import msgspec
import pytest

from convy.compare.comparison import Compared
from convy.compare.staged import Played, Staged, Stages
from convy.compare.statistics import Table, Tally
from convy.compare.summary import Summary, Summed
from convy.play.outcome import ClaimResult, Outcome, Verdict
from convy.store.runfile import Against, RunFile, RunSpec, ScenarioEntry

Side = tuple[int, int, int]
"""A staged side: its first stage's end, `repeat`, `most`: 1 → repeat → most, or (a run with a
floor, decision 28) repeat → most when the first end is `repeat`."""


def ends(side: Side) -> tuple[int, ...]:
    return tuple(sorted(set(side)))


def sizes_of(side: Side) -> tuple[int, ...]:
    stops = ends(side)
    return tuple(end - start for start, end in zip((0, *stops[:-1]), stops, strict=True))


def played(bits: tuple[int, ...], side: Side, against: tuple[int, int]) -> tuple[tuple[int, int], ...]:
    """The stages a run plays by the rule, each as (held, judged): before `repeat`, stop when every
    attempt so far in both runs held or every one missed; at `repeat`, stop unless at least one held
    and at most half did, over both runs; the last stage ends it."""
    repeat = side[1]
    held, judged = against
    stages: list[tuple[int, int]] = []
    start = 0
    for end in ends(side):
        stages.append((sum(bits[start:end]), end - start))
        start = end
        total = held + sum(bits[:end])
        if end < repeat and total in (0, judged + end):
            break
        if end == repeat and not (total >= 1 and 2 * total <= judged + repeat):
            break
    return tuple(stages)


def enumerated(
    base: int | tuple[Side, tuple[int, int]], now: Side, against: tuple[int, int] | None
) -> dict[tuple[object, ...], dict[int, Fraction]]:
    """For every design outcome (the stages both runs reached and the total held), the distribution
    of held now, under no change at rate 1/3 (any rate gives the same conditional distribution).
    `base` is a plain baseline's attempts, or a staged baseline's side and the older tally it
    decided against; `against` None: the run decided against the baseline."""
    rate = Fraction(1, 3)
    size = base if isinstance(base, int) else base[0][2]
    found: dict[tuple[object, ...], dict[int, Fraction]] = {}
    for bits in itertools.product((0, 1), repeat=size + now[2]):
        old, new = bits[:size], bits[size:]
        if isinstance(base, int):
            before: tuple[tuple[int, int], ...] = ((sum(old), base),)
        else:
            before = played(old, base[0], base[1])
        used = sum(judged for _, judged in before)
        if any(old[used:]):
            continue  # attempts never played: count each played sequence once
        b = sum(held for held, _ in before)
        stages = played(new, now, (b, used) if against is None else against)
        length = sum(judged for _, judged in stages)
        if any(new[length:]):
            continue
        c = sum(held for held, _ in stages)
        weight = rate ** (b + c) * (1 - rate) ** (used + length - b - c)
        key = (tuple(j for _, j in before), tuple(j for _, j in stages), b + c)
        found.setdefault(key, {}).setdefault(c, Fraction(0))
        found[key][c] += weight
    return found


def table(
    base: int | tuple[Side, tuple[int, int]],
    now: Side,
    against: tuple[int, int] | None,
    key: tuple[object, ...],
    c: int,
) -> Staged | None:
    """A Staged table with `c` held now in the design outcome `key`, split over the stages some way
    the rule plays (None when there is none: the enumeration found no such table)."""
    before_judged, now_judged, total = key
    assert isinstance(before_judged, tuple) and isinstance(now_judged, tuple) and isinstance(total, int)
    sizes = sizes_of(now)[: len(now_judged)]
    base_sizes: tuple[int, ...] = (
        (base,) if isinstance(base, int) else sizes_of(base[0])[: len(before_judged)]
    )
    for now_split in itertools.product(*(range(s + 1) for s in sizes)):
        if sum(now_split) != c:
            continue
        for old_split in itertools.product(*(range(s + 1) for s in base_sizes)):
            if sum(old_split) != total - c:
                continue
            b = total - c
            old_bits = tuple(
                bit
                for held, size in zip(old_split, base_sizes, strict=True)
                for bit in [1] * held + [0] * (size - held)
            )
            new_bits = tuple(
                bit
                for held, size in zip(now_split, sizes, strict=True)
                for bit in [1] * held + [0] * (size - held)
            )
            if not isinstance(base, int) and played(old_bits + (0,) * 9, base[0], base[1])[
                : len(base_sizes)
            ] != tuple(zip(old_split, base_sizes, strict=True)):
                continue
            if not isinstance(base, int) and len(played(old_bits + (0,) * 9, base[0], base[1])) != len(
                base_sizes
            ):
                continue
            decided = (b, sum(base_sizes)) if against is None else against
            if played(new_bits + (0,) * 9, now, decided) != tuple(zip(now_split, sizes, strict=True)):
                continue
            before = (
                None
                if isinstance(base, int)
                else Played(
                    design=Stages.of(base[0][1], base[0][2], base[0][0] == base[0][1]),
                    stages=tuple(Tally(held=h, judged=s) for h, s in zip(old_split, base_sizes, strict=True)),
                    against=Tally(held=base[1][0], judged=base[1][1]),
                )
            )
            return Staged(
                now=Tally(held=c, judged=sum(sizes)),
                baseline=Tally(held=b, judged=sum(base_sizes)),
                played=Played(
                    design=Stages.of(now[1], now[2], now[0] == now[1]),
                    stages=tuple(Tally(held=h, judged=s) for h, s in zip(now_split, sizes, strict=True)),
                    against=None if against is None else Tally(held=against[0], judged=against[1]),
                ),
                before=before,
            )
    return None


CASES: list[tuple[int | tuple[Side, tuple[int, int]], Side, tuple[int, int] | None]] = [
    (3, (1, 3, 5), None),
    (3, (1, 2, 4), None),
    (2, (1, 3, 6), None),
    (4, (1, 2, 3), None),
    (2, (1, 2, 4), (1, 1)),
    (3, (1, 3, 5), (0, 3)),
    (((1, 2, 4), (2, 3)), (1, 2, 4), None),
    (((1, 2, 4), (3, 3)), (1, 3, 5), None),
    (((1, 3, 5), (0, 2)), (1, 2, 4), None),
    (((1, 2, 4), (1, 1)), (1, 2, 4), (2, 4)),
    # a run with a floor: its stages start at repeat (decision 28)
    (3, (2, 2, 4), None),
    (2, (3, 3, 5), None),
    (3, (3, 3, 6), (1, 3)),
    (((1, 2, 4), (2, 3)), (2, 2, 4), None),
    (((2, 2, 4), (1, 2)), (3, 3, 5), None),
]


@pytest.mark.parametrize(("base", "now", "against"), CASES)
def test_the_staged_distribution_is_the_conditional_one_of_the_design(
    base: int | tuple[Side, tuple[int, int]], now: Side, against: tuple[int, int] | None
) -> None:
    checked = 0
    for key, cell in enumerated(base, now, against).items():
        mass = sum(cell.values())
        for c in cell:
            made = table(base, now, against, key, c)
            assert made is not None, (key, c)
            distribution = made.distribution()
            weights = sum(distribution.weights)
            for value, expected in cell.items():
                index = value - distribution.start
                got = (
                    Fraction(distribution.weights[index], weights)
                    if 0 <= index < len(distribution.weights)
                    else 0
                )
                assert got == expected / mass, (base, now, against, key, c, value)
            checked += 1
    assert checked > 10


@pytest.mark.parametrize(("base", "now", "against"), CASES[:2] + CASES[6:8] + CASES[-5:])
def test_one_scenario_by_stages_is_significant_at_most_alpha_of_the_time(
    base: int | tuple[Side, tuple[int, int]], now: Side, against: tuple[int, int] | None
) -> None:
    """Exactly, by enumeration, for many rates: P(p-value of a drop < alpha) <= alpha."""
    grouped = enumerated(base, now, against)
    rejected = {alpha: dict.fromkeys(range(1, 20), Fraction(0)) for alpha in (0.05, 0.1, 0.2)}
    for key, cell in grouped.items():
        before_judged, now_judged, total = key
        assert isinstance(before_judged, tuple) and isinstance(now_judged, tuple) and isinstance(total, int)
        judged = sum(before_judged) + sum(now_judged)
        for c in cell:
            made = table(base, now, against, key, c)
            assert made is not None
            p = made.drop()
            # every played sequence of this design outcome and c held now has the same probability
            # at a rate: its share of the cell, times the cell's mass, rescaled from rate 1/3
            scale = cell[c] / (Fraction(1, 3) ** total * Fraction(2, 3) ** (judged - total))
            for k in range(1, 20):
                rate = Fraction(k, 20)
                weight = scale * rate**total * (1 - rate) ** (judged - total)
                for alpha in rejected:
                    if p.below(alpha):
                        rejected[alpha][k] += weight
    for alpha, by_rate in rejected.items():
        for k, mass in by_rate.items():
            assert mass <= alpha, (alpha, k, float(mass))


def test_stages_of_repeat_and_max_repeat() -> None:
    assert Stages.of(3, 9).ends == (1, 3, 9)
    assert Stages.of(3, 9, floored=True).ends == (3, 9), "a run with a floor starts at repeat"
    assert Stages.of(1, 6).ends == (1, 6)
    assert not Stages.of(3, 3).on
    design = Stages.of(3, 9)
    assert [design.stage(i) for i in range(10)] == [0, 1, 1, 2, 2, 2, 2, 2, 2, 2]
    assert list(design.span(1)) == [1, 2]
    three = Tally(held=3, judged=3)
    assert not design.goes_on(0, Tally(held=1, judged=1), three), "all held in both: stop"
    assert design.goes_on(0, Tally(held=0, judged=1), three)
    assert design.goes_on(0, Tally(held=0, judged=0), three), "nothing judged yet: go on"
    assert not design.goes_on(1, Tally(held=1, judged=3), three), "4 of 6 held: more than half"
    assert design.goes_on(1, Tally(held=0, judged=3), Tally(held=2, judged=3))
    assert not design.goes_on(1, Tally(held=2, judged=3), Tally(held=2, judged=3))
    assert not design.goes_on(2, Tally(held=0, judged=9), three), "the last stage ends it"


def test_a_table_the_rule_cannot_have_made_is_fishers_test_as_it_is() -> None:
    design = Stages.of(3, 9)
    plain = Table(now=Tally(held=3, judged=9), baseline=Tally(held=3, judged=3))
    # went on after all held in both runs at the first attempt: not the rule's doing
    stray = Staged(
        now=plain.now,
        baseline=plain.baseline,
        played=Played(
            design=design,
            stages=(Tally(held=1, judged=1), Tally(held=2, judged=2), Tally(held=0, judged=6)),
        ),
    )
    assert stray.distribution() == plain.distribution()
    made = Staged(
        now=Tally(held=1, judged=9),
        baseline=Tally(held=2, judged=3),
        played=Played(
            design=design,
            stages=(Tally(held=0, judged=1), Tally(held=1, judged=2), Tally(held=0, judged=6)),
        ),
    )
    fisher = Table(now=made.now, baseline=made.baseline)
    assert made.drop().value > fisher.drop().value, "the design's test knows the attempts were chosen"


def summed(
    attempts: dict[str, list[bool]], against: dict[str, tuple[int, int]], started: str, baseline: str
) -> Summary:
    """A run of these attempts (held or not, by index) played by stages 1 → 3 → 9 against these
    baseline tallies (a scenario without one played plainly)."""
    spec = RunSpec(
        agent="a",
        repeat=3,
        max_repeat=9,
        stages=(1, 3, 9),
        baseline=baseline,
        scenarios=tuple(
            ScenarioEntry(
                name=name,
                fingerprint="f",
                against=Against(held=against[name][0], judged=against[name][1]) if name in against else None,
            )
            for name in attempts
        ),
    )
    outcomes = [
        Outcome(
            scenario=name,
            index=index,
            fingerprint="f",
            turns=(),
            seconds=1.0,
            decision=Verdict(holds=holds, claims=(ClaimResult(claim="c", passed=holds),)),
        )
        for name, said in attempts.items()
        for index, holds in enumerate(said)
    ]
    return Summed(
        RunFile(format=2, spec=spec, status="finished", started=started), "results/a/r", outcomes
    ).summary()


def plain(attempts: dict[str, list[bool]], started: str) -> Summary:
    spec = RunSpec(
        agent="a", repeat=3, scenarios=tuple(ScenarioEntry(name=n, fingerprint="f") for n in attempts)
    )
    outcomes = [
        Outcome(
            scenario=name,
            index=index,
            fingerprint="f",
            turns=(),
            seconds=1.0,
            decision=Verdict(holds=holds, claims=(ClaimResult(claim="c", passed=holds),)),
        )
        for name, said in attempts.items()
        for index, holds in enumerate(said)
    ]
    return Summed(
        RunFile(format=2, spec=spec, status="finished", started=started), "results/a/b", outcomes
    ).summary()


def test_a_staged_run_sums_up_by_stages_and_weighs_every_scenario_the_same() -> None:
    now = summed(
        {
            "solid": [True],
            "shaky": [False, True, False, False, False, True, False, False, False],
            "new": [True] * 3,
        },
        {"solid": (3, 3), "shaky": (1, 3)},
        "t1",
        "a@t0",
    )
    shaky = next(s for s in now.scenarios if s.name == "shaky")
    assert shaky.stages == (Tally(held=0, judged=1), Tally(held=1, judged=2), Tally(held=1, judged=6))
    assert shaky.against == Tally(held=1, judged=3)
    assert next(s for s in now.scenarios if s.name == "new").against is None
    assert now.stages == (1, 3, 9) and now.decided == "a@t0"
    assert now.expected == 1 + 9 + 3, "what the rule called for, not 3 of each"
    assert now.averaged and now.exact_rate() == (Fraction(1) + Fraction(2, 9) + Fraction(1)) / 3


def test_the_comparison_tests_a_staged_run_by_its_stages_and_reads_a_staged_baseline_whole() -> None:
    before = plain({"solid": [True] * 3, "shaky": [True, False, False]}, "t0")
    now = summed(
        {"solid": [True], "shaky": [False, False, False, False, False, False, False, False, False]},
        {"solid": (3, 3), "shaky": (1, 3)},
        "t1",
        "a@t0",
    )
    comparison = Compared(now, before).comparison()
    tables = {t.now.judged: t for t in Compared(now, before).comparison().common}
    assert set(tables) == {1, 9}
    staged = Compared(now, before).table(now.scenarios[1], before.scenarios[1], before)
    assert isinstance(staged, Staged) and staged.played.against is None, "decided against this very baseline"
    elsewhere = Compared(now, msgspec.structs.replace(before, started="t9")).table(
        now.scenarios[1], before.scenarios[1], msgspec.structs.replace(before, started="t9")
    )
    assert isinstance(elsewhere, Staged) and elsewhere.played.against == Tally(held=1, judged=3)
    assert comparison.drop is not None and comparison.drop == pytest.approx((1 + 1 / 3) / 2 - (1 + 0) / 2)
    # the next run reads this staged run whole, knowing how its stages were decided
    later = summed(
        {"solid": [True], "shaky": [True] + [False] * 8},
        {"solid": (1, 1), "shaky": (0, 9)},
        "t2",
        "a@t1",
    )
    table = Compared(later, now).table(later.scenarios[1], now.scenarios[1], now)
    assert isinstance(table, Staged) and table.baseline == Tally(held=0, judged=9)
    assert table.before == Played(
        design=Stages.of(3, 9),
        stages=(Tally(held=0, judged=1), Tally(held=0, judged=2), Tally(held=0, judged=6)),
        against=Tally(held=1, judged=3),
    )
