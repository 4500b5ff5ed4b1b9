"""Staged repeats: the test that reads a run played by stages is exact — its distribution is the
conditional one the stages' decisions give, checked against brute-force enumeration of every way the
attempts of both runs could have fallen (the rule written out here again, not taken from the code),
so the false-alarm rate stays at or under alpha."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from convy.compare.staged import Played, Staged, Stages
from convy.compare.statistics import Table, Tally

Side = tuple[int, int, int]
"""A staged side: one attempt, to `repeat`, to `most` (1 → repeat → most)."""


def played(bits: tuple[int, ...], side: Side, against: tuple[int, int]) -> tuple[tuple[int, int], ...]:
    """The stages a run plays by the rule, each as (held, judged): stop after the first attempt when
    every attempt so far in both runs held or every one missed; stop at `repeat` unless at least one
    held and at most half did, over both runs."""
    one, repeat, most = side
    held, judged = against
    stages = [(bits[0], 1)]
    if held + bits[0] in (0, judged + 1):
        return tuple(stages)
    stages.append((sum(bits[1:repeat]), repeat - 1))
    total = held + sum(bits[:repeat])
    if not (total >= 1 and 2 * total <= judged + repeat):
        return tuple(stages)
    stages.append((sum(bits[repeat:most]), most - repeat))
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
    sizes = (now[0], now[1] - now[0], now[2] - now[1])[: len(now_judged)]
    base_sizes: tuple[int, ...] = (
        (base,)
        if isinstance(base, int)
        else (1, base[0][1] - 1, base[0][2] - base[0][1])[: len(before_judged)]
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
                    design=Stages.of(base[0][1], base[0][2]),
                    stages=tuple(Tally(held=h, judged=s) for h, s in zip(old_split, base_sizes, strict=True)),
                    against=Tally(held=base[1][0], judged=base[1][1]),
                )
            )
            return Staged(
                now=Tally(held=c, judged=sum(sizes)),
                baseline=Tally(held=b, judged=sum(base_sizes)),
                played=Played(
                    design=Stages.of(now[1], now[2]),
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


@pytest.mark.parametrize(("base", "now", "against"), CASES[:2] + CASES[6:8])
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
