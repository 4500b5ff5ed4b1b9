"""The statistics of the comparison against hand-worked cases, SciPy, statsmodels, brute force and a
seeded simulation."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import msgspec
import numpy as np
import pytest
from scipy.stats import fisher_exact, hypergeom, norm
from statsmodels.stats.contingency_tables import StratifiedTable
from statsmodels.stats.proportion import proportion_confint

from convy.compare.statistics import Distribution, PValue, Rate, Share, Strata, Table, Tally, Unknown


def table(held: int, judged: int, baseline_held: int, baseline_judged: int) -> Table:
    return Table(
        now=Tally(held=held, judged=judged), baseline=Tally(held=baseline_held, judged=baseline_judged)
    )


def enumerated(strata: Strata) -> tuple[Fraction, Fraction, Fraction]:
    """drop, gain and two-sided p by enumerating every set of tables with the strata's margins,
    each weighted by the product of its exact hypergeometric probabilities."""
    ranges = []
    for each in strata.tables:
        held = each.now.held + each.baseline.held
        judged = each.now.judged + each.baseline.judged
        drawn = each.now.judged
        ranges.append(
            [
                (
                    count,
                    Fraction(
                        math.comb(held, count) * math.comb(judged - held, drawn - count),
                        math.comb(judged, drawn),
                    ),
                )
                for count in range(0, drawn + 1)
                if count <= held and drawn - count <= judged - held
            ]
        )
    law: dict[int, Fraction] = {}
    for combination in itertools.product(*ranges):
        total = sum(count for count, _ in combination)
        chance = math.prod((p for _, p in combination), start=Fraction(1))
        law[total] = law.get(total, Fraction(0)) + chance
    observed = strata.held()
    drop = sum((p for s, p in law.items() if s <= observed), start=Fraction(0))
    gain = sum((p for s, p in law.items() if s >= observed), start=Fraction(0))
    either = sum((p for p in law.values() if p <= law[observed]), start=Fraction(0))
    return drop, gain, either


def value(p: PValue | Unknown) -> float:
    assert isinstance(p, PValue)
    return p.value


# Tally: rate and Wilson interval


def test_nine_of_twelve_prints_as_the_design_shows() -> None:
    rate = Tally(held=9, judged=12).rate()
    assert isinstance(rate, Rate)
    assert rate.text() == "75.0% (46.8–91.1%)"


def test_wilson_by_hand() -> None:
    # 12 of 16 at z = 1.96: centre (0.75 + z²/32) / (1 + z²/16),
    # half z·sqrt(p(1-p)/16 + z²/1024) / (1 + z²/16)
    z = 1.959963984540054
    centre = (0.75 + z * z / 32) / (1 + z * z / 16)
    half = z * math.sqrt(0.75 * 0.25 / 16 + z * z / 1024) / (1 + z * z / 16)
    rate = Tally(held=12, judged=16).rate()
    assert isinstance(rate, Rate)
    assert rate.value == 0.75
    assert rate.low == pytest.approx(centre - half, abs=1e-15)
    assert rate.high == pytest.approx(centre + half, abs=1e-15)
    assert rate.text() == "75.0% (50.5–89.8%)"


@pytest.mark.parametrize("judged", [1, 2, 3, 5, 10, 30, 100, 1000])
def test_wilson_equals_statsmodels(judged: int) -> None:
    for held in range(0, judged + 1, max(1, judged // 17)):
        rate = Tally(held=held, judged=judged).rate()
        low, high = proportion_confint(held, judged, alpha=0.05, method="wilson")
        assert isinstance(rate, Rate)
        assert rate.low == pytest.approx(low, abs=1e-12)
        assert rate.high == pytest.approx(high, abs=1e-12)


def test_wilson_at_another_level_equals_statsmodels() -> None:
    rate = Tally(held=7, judged=20).rate(z=float(norm.isf(0.05)))
    low, high = proportion_confint(7, 20, alpha=0.10, method="wilson")
    assert isinstance(rate, Rate)
    assert (rate.low, rate.high) == pytest.approx((low, high), abs=1e-12)


def test_ends_of_the_interval_are_exact_at_the_extremes() -> None:
    none = Tally(held=0, judged=5).rate()
    every = Tally(held=5, judged=5).rate()
    assert isinstance(none, Rate) and isinstance(every, Rate)
    assert none.low == 0.0 and none.value == 0.0 and 0.0 < none.high < 1.0
    assert every.high == 1.0 and every.value == 1.0 and 0.0 < every.low < 1.0
    assert none.text() == "0.0% (0.0–43.4%)"


def test_nothing_judged_has_an_unknown_rate() -> None:
    rate = Tally(held=0, judged=0).rate()
    assert rate == Unknown()
    assert rate.text() == "unknown"


@pytest.mark.parametrize(("held", "judged"), [(-1, 3), (4, 3), (0, -1)])
def test_a_tally_out_of_range_is_refused(held: int, judged: int) -> None:
    with pytest.raises(ValueError, match="held <= judged"):
        Tally(held=held, judged=judged)


def test_tallies_add() -> None:
    assert Tally(held=2, judged=3).plus(Tally(held=1, judged=4)) == Tally(held=3, judged=7)


def test_results_encode_tagged_and_decode_back() -> None:
    results: list[Rate | Share | PValue | Unknown] = [
        Rate(value=0.5, low=0.2, high=0.8),
        Share(value=0.25),
        PValue(value=0.01),
        Unknown(),
    ]
    encoded = msgspec.json.encode(results)
    assert b'"type":"unknown"' in encoded and b'"type":"p_value"' in encoded
    assert msgspec.json.decode(encoded, type=list[Rate | Share | PValue | Unknown]) == results


def test_results_out_of_range_are_refused() -> None:
    with pytest.raises(ValueError):
        PValue(value=1.5)
    with pytest.raises(ValueError):
        PValue(value=float("nan"))
    with pytest.raises(ValueError):
        Rate(value=0.9, low=0.2, high=0.8)
    with pytest.raises(ValueError):
        Share(value=-0.1)


# pass^k


def test_pass_k_as_tau_bench() -> None:
    assert Tally(held=3, judged=5).pass_k(1) == Share(value=0.6)
    assert Tally(held=3, judged=5).pass_k(2) == Share(value=3 / 10)
    assert Tally(held=3, judged=5).pass_k(3) == Share(value=1 / 10)
    assert Tally(held=3, judged=5).pass_k(4) == Share(value=0.0)
    assert Tally(held=5, judged=5).pass_k(5) == Share(value=1.0)
    assert Tally(held=4, judged=5).pass_k(5) == Share(value=0.0)


def test_pass_k_of_fewer_attempts_than_k_is_unknown() -> None:
    assert Tally(held=2, judged=2).pass_k(3) == Unknown()
    assert Tally(held=0, judged=0).pass_k(1) == Unknown()


def test_pass_k_needs_k_of_one_or_more() -> None:
    with pytest.raises(ValueError, match="k >= 1"):
        Tally(held=1, judged=2).pass_k(0)


def test_pass_k_prints_as_a_percentage() -> None:
    assert Share(value=2 / 3).text() == "66.7%"


# Fisher's exact test


def test_fisher_by_hand() -> None:
    # now 1 of 4 held, baseline 4 of 4: margins 5 held of 8, 4 drawn. P(1) = C(5,1)C(3,3)/C(8,4) = 5/70,
    # P(2) = C(5,2)C(3,2)/70 = 30/70, P(3) = 30/70, P(4) = 5/70.
    fisher = table(1, 4, 4, 4)
    assert fisher.drop() == PValue(value=5 / 70)
    assert fisher.gain() == PValue(value=1.0)
    assert fisher.change() == PValue(value=10 / 70)
    assert table(4, 4, 1, 4).gain() == PValue(value=5 / 70)


@pytest.mark.parametrize(
    "cells",
    [
        (3, 7, 8, 2),
        (8, 2, 1, 5),
        (0, 5, 5, 0),
        (10, 0, 0, 10),
        (5, 5, 5, 5),
        (0, 0, 3, 4),
        (0, 0, 0, 0),
        (12, 3, 30, 1),
        (1, 30, 2, 40),
        (45, 15, 50, 10),
        (7, 0, 7, 0),
        (2, 9, 9, 2),
    ],
)
def test_fisher_equals_scipy(cells: tuple[int, int, int, int]) -> None:
    a, b, c, d = cells
    fisher = table(a, a + b, c, c + d)
    grid = [[a, b], [c, d]]
    assert fisher.drop().value == pytest.approx(fisher_exact(grid, "less").pvalue, rel=1e-10, abs=1e-14)
    assert fisher.gain().value == pytest.approx(fisher_exact(grid, "greater").pvalue, rel=1e-10, abs=1e-14)
    assert fisher.change().value == pytest.approx(fisher_exact(grid).pvalue, rel=1e-10, abs=1e-14)


def test_a_drop_is_significant_and_a_gain_is_not() -> None:
    fisher = table(2, 10, 9, 10)
    assert fisher.drop().below(0.05)
    assert not fisher.gain().below(0.05)
    assert fisher.drop().text() == "p = 0.00274"
    assert PValue(value=0.0495).text() == "p = 0.0495"
    assert PValue(value=1.0).text() == "p = 1"
    assert table(0, 30, 30, 30).drop().text() == "p < 0.001"


# The exact stratified test


def test_no_strata_gives_unknown_p_values() -> None:
    strata = Strata(tables=())
    assert strata.drop() == Unknown() and strata.gain() == Unknown() and strata.change() == Unknown()
    assert not strata.drop().below(0.05)
    with pytest.raises(ValueError):
        strata.distribution()


def test_one_stratum_is_fisher() -> None:
    for cells in [(1, 4, 4, 4), (3, 10, 8, 10), (6, 6, 2, 9), (0, 3, 0, 3)]:
        fisher = table(*cells)
        strata = Strata(tables=(fisher,))
        assert (strata.drop(), strata.gain(), strata.change()) == (
            fisher.drop(),
            fisher.gain(),
            fisher.change(),
        )


def test_stratified_by_hand() -> None:
    # two strata, each 1 of 2 now vs 2 of 2 before: each hypergeometric over {1, 2} with P(1) = P(2) = 1/2
    # (margins 3 held of 4, 2 drawn: C(3,1)C(1,1)/C(4,2) = 3/6, C(3,2)/6 = 3/6).
    # The sum over {2, 3, 4} is 1/4, 1/2, 1/4; observed 2.
    strata = Strata(tables=(table(1, 2, 2, 2), table(1, 2, 2, 2)))
    assert strata.drop() == PValue(value=0.25)
    assert strata.gain() == PValue(value=1.0)
    assert strata.change() == PValue(value=0.5)


def test_stratified_equals_enumeration_on_small_cases() -> None:
    rng = random.Random(20240601)
    for _ in range(60):
        tables = []
        for _ in range(rng.randint(1, 4)):
            judged, baseline_judged = rng.randint(0, 6), rng.randint(0, 6)
            tables.append(
                table(rng.randint(0, judged), judged, rng.randint(0, baseline_judged), baseline_judged)
            )
        strata = Strata(tables=tuple(tables))
        drop, gain, either = enumerated(strata)
        assert value(strata.drop()) == pytest.approx(float(drop), abs=1e-15)
        assert value(strata.gain()) == pytest.approx(float(gain), abs=1e-15)
        assert value(strata.change()) == pytest.approx(float(either), abs=1e-15)


def test_stratified_equals_enumeration_when_weights_are_scaled() -> None:
    # three strata of 30 and 30 attempts: the exact weights pass PRECISION bits and are scaled
    strata = Strata(tables=(table(11, 30, 19, 30), table(20, 30, 24, 30), table(5, 30, 9, 30)))
    drop, gain, either = enumerated(strata)
    assert value(strata.drop()) == pytest.approx(float(drop), abs=1e-15)
    assert value(strata.gain()) == pytest.approx(float(gain), abs=1e-15)
    assert value(strata.change()) == pytest.approx(float(either), abs=1e-15)
    assert value(strata.drop()) < 0.05


def test_strata_without_variation_change_nothing() -> None:
    varied = (table(2, 5, 5, 5), table(1, 4, 3, 4))
    constant = (table(5, 5, 4, 4), table(0, 3, 0, 6), table(0, 0, 2, 3), table(3, 3, 0, 0))
    with_them = Strata(tables=varied + constant)
    without = Strata(tables=varied)
    assert with_them.drop() == without.drop()
    assert with_them.gain() == without.gain()
    assert with_them.change() == without.change()
    assert Strata(tables=constant).drop() == PValue(value=1.0)


def test_pooling_loses_what_stratifying_finds() -> None:
    # an easy and a hard scenario, each a little worse now: pooled, the difficulty hides the drop
    strata = Strata(tables=(table(8, 10, 10, 10), table(0, 10, 2, 10)))
    pooled = table(8, 20, 12, 20)
    assert value(strata.drop()) < pooled.drop().value


def mantel_haenszel(strata: Strata) -> tuple[float, float, float, float, float]:
    """The MH test's continuity-corrected two-sided p, and the mean, standard deviation, third and
    fourth cumulants of the exact conditional distribution of the held count (cumulants of independent
    strata add)."""
    cells = np.array(
        [
            [[t.now.held, t.now.judged - t.now.held], [t.baseline.held, t.baseline.judged - t.baseline.held]]
            for t in strata.tables
        ]
    ).transpose(1, 2, 0)
    p = float(StratifiedTable(cells).test_null_odds(correction=True).pvalue)
    mean = variance = third = fourth = 0.0
    for t in strata.tables:
        distribution = t.distribution()
        counts = np.arange(distribution.start, distribution.start + len(distribution.weights))
        chances = hypergeom.pmf(
            counts, t.now.judged + t.baseline.judged, t.now.held + t.baseline.held, t.now.judged
        )
        centre = float((counts * chances).sum())
        second = float(((counts - centre) ** 2 * chances).sum())
        mean += centre
        variance += second
        third += float(((counts - centre) ** 3 * chances).sum())
        fourth += float(((counts - centre) ** 4 * chances).sum()) - 3 * second**2
    return p, mean, math.sqrt(variance), third, fourth


@pytest.mark.parametrize("scale", [2, 6, 20])
def test_stratified_approaches_mantel_haenszel_on_large_strata(scale: int) -> None:
    """On large strata the exact test and the MH test (the normal approximation of the same conditional
    distribution, with a continuity correction) agree: the one-sided exact p is half the two-sided MH p,
    on the side of the change. Their difference is what the Edgeworth expansion of a lattice
    distribution adds to Φ(z): the skewness term κ3/(6σ³)·(z²−1)φ(z), at most 0.0665·|κ3|/σ³, then the
    terms of order 1/σ² — κ4/(24σ⁴)·(z³−3z)φ(z), at most 0.0230·|κ4|/σ⁴; κ3²/(72σ⁶)·(z⁵−10z³+15z)φ(z),
    at most 0.0321·κ3²/σ⁶; the lattice term z·φ(z)/(24σ²), at most 0.0101/σ² — allowed twice over for
    what follows them. Two-sided, the exact test's far tail ends on a whole count, so the p-values
    may also differ by the chance of one value."""
    rng = random.Random(scale)
    for shift in (-0.05 / math.sqrt(scale), 0.05 / math.sqrt(scale)):
        tables = []
        for _ in range(15):
            rate = rng.uniform(0.15, 0.85)
            judged, baseline_judged = 10 * scale + rng.randint(0, 5), 10 * scale + rng.randint(0, 5)
            tables.append(
                table(round(judged * (rate + shift)), judged, round(baseline_judged * rate), baseline_judged)
            )
        strata = Strata(tables=tuple(tables))
        p, mean, deviation, third, fourth = mantel_haenszel(strata)
        tolerance = 0.0665 * abs(third) / deviation**3 + 2 * (
            0.0230 * abs(fourth) / deviation**4 + 0.0321 * third**2 / deviation**6 + 0.0101 / deviation**2
        )
        one_sided = value(strata.drop()) if strata.held() < mean else value(strata.gain())
        assert abs(one_sided - p / 2) <= tolerance
        # two-sided, the far tail ends on a whole count: one value's chance more or less
        distribution = strata.distribution()
        likeliest = max(distribution.weights) / sum(distribution.weights)
        assert abs(value(strata.change()) - p) <= 2 * tolerance + likeliest
        assert 0.005 < one_sided < 0.4
        if shift < 0:
            assert strata.held() < mean and value(strata.drop()) < value(strata.gain())
        else:
            assert strata.held() > mean and value(strata.gain()) < value(strata.drop())


def test_stratified_equals_exact_convolution_on_large_cases() -> None:
    """Twenty strata of 60 attempts, too many to enumerate: the distribution convolved term by term in
    exact integers, without scaling, gives the same p-values."""
    rng = random.Random(99)
    tables = []
    for _ in range(20):
        rate = rng.uniform(0.1, 0.9)
        tables.append(table(round(30 * rate) - rng.randint(0, 4), 30, round(30 * rate), 30))
    strata = Strata(tables=tuple(tables))
    weights = [1]
    start = 0
    for each in tables:
        single = each.distribution()
        product = [0] * (len(weights) + len(single.weights) - 1)
        for i, left in enumerate(weights):
            for j, right in enumerate(single.weights):
                product[i + j] += left * right
        weights, start = product, start + single.start
    total = sum(weights)
    observed = strata.held() - start
    drop = Fraction(sum(weights[: observed + 1]), total)
    gain = Fraction(sum(weights[observed:]), total)
    either = Fraction(sum(w for w in weights if w <= weights[observed]), total)
    assert value(strata.drop()) == pytest.approx(float(drop), rel=1e-12, abs=1e-17)
    assert value(strata.gain()) == pytest.approx(float(gain), rel=1e-12, abs=1e-17)
    assert value(strata.change()) == pytest.approx(float(either), rel=1e-12, abs=1e-17)
    assert 1e-6 < drop < 0.05


def test_a_hundred_strata_of_thirty_attempts_give_a_consistent_exact_test() -> None:
    # how fast this is belongs to benchmarks/, not to a unit test on a shared machine
    rng = random.Random(7)
    tables = []
    for _ in range(100):
        rate = rng.random()
        tables.append(
            table(
                sum(rng.random() < rate for _ in range(30)),
                30,
                sum(rng.random() < rate for _ in range(30)),
                30,
            )
        )
    strata = Strata(tables=tuple(tables))
    drop = strata.drop()
    gain, either = value(strata.gain()), value(strata.change())
    distribution = strata.distribution()
    observed = distribution.weights[strata.held() - distribution.start] / sum(distribution.weights)
    assert value(drop) + gain - observed == pytest.approx(1.0, abs=1e-14)
    assert 0.0 < either <= 1.0


def test_no_change_raises_no_more_false_alarms_than_alpha() -> None:
    """Seeded simulation under no change: ten scenarios of different difficulty, 3 to 10 attempts each,
    the same chance of holding in both runs. The share of runs where the test calls a drop stays
    under alpha (the exact conditional test is conservative)."""
    rng = random.Random(1234)
    rates = [0.05, 0.2, 0.35, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0]
    attempts = [rng.randint(3, 10) for _ in rates]
    alarms = 0
    replications = 2000
    for _ in range(replications):
        tables = tuple(
            table(
                sum(rng.random() < rate for _ in range(n)), n, sum(rng.random() < rate for _ in range(n)), n
            )
            for rate, n in zip(rates, attempts, strict=True)
        )
        alarms += Strata(tables=tables).drop().below(0.05)
    assert alarms / replications <= 0.05
    assert alarms > 0


def test_distribution_refuses_weights_it_cannot_hold() -> None:
    with pytest.raises(ValueError):
        Distribution(start=0, weights=())
    with pytest.raises(ValueError):
        Distribution(start=0, weights=(0, 0))
    with pytest.raises(ValueError):
        Distribution(start=0, weights=(1, -1))


def test_distribution_tails_outside_its_range() -> None:
    distribution = Distribution(start=3, weights=(1, 2, 1))
    assert distribution.at_most(2) == 0.0 and distribution.at_most(9) == 1.0
    assert distribution.at_least(9) == 0.0 and distribution.at_least(0) == 1.0
    assert distribution.at_most(4) == 0.75 and distribution.at_least(4) == 0.75
    assert distribution.as_likely(3) == 0.5 and distribution.as_likely(4) == 1.0
    assert distribution.plus(Distribution(start=1, weights=(1, 1))) == Distribution(
        start=4, weights=(1, 3, 3, 1)
    )
