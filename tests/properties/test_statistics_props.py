"""Properties of the statistics over generated tallies, tables and strata: Wilson against statsmodels,
Fisher against SciPy, the stratified test against enumeration."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import fisher_exact
from statsmodels.stats.proportion import proportion_confint

from convy.compare.statistics import PValue, Rate, Share, Strata, Table, Tally, Unknown


def enumerated(strata: Strata) -> tuple[Fraction, Fraction, Fraction]:
    """drop, gain and two-sided p by enumerating every set of tables with the strata's margins, each
    weighted by the product of its exact hypergeometric probabilities."""
    choices = []
    for each in strata.tables:
        held, judged = each.now.held + each.baseline.held, each.now.judged + each.baseline.judged
        drawn = each.now.judged
        whole = math.comb(judged, drawn)
        choices.append(
            [
                (count, Fraction(math.comb(held, count) * math.comb(judged - held, drawn - count), whole))
                for count in range(drawn + 1)
                if count <= held and drawn - count <= judged - held
            ]
        )
    law: dict[int, Fraction] = {}
    for combination in itertools.product(*choices):
        total = sum(count for count, _ in combination)
        law[total] = law.get(total, Fraction(0)) + math.prod((p for _, p in combination), start=Fraction(1))
    observed = strata.held()
    drop = sum((p for s, p in law.items() if s <= observed), start=Fraction(0))
    gain = sum((p for s, p in law.items() if s >= observed), start=Fraction(0))
    either = sum((p for p in law.values() if p <= law[observed]), start=Fraction(0))
    return drop, gain, either


@st.composite
def tallies(draw: st.DrawFn, most: int = 60) -> Tally:
    judged = draw(st.integers(0, most))
    return Tally(held=draw(st.integers(0, judged)), judged=judged)


@st.composite
def tables(draw: st.DrawFn, most: int = 60) -> Table:
    return Table(now=draw(tallies(most)), baseline=draw(tallies(most)))


def value(p: PValue | Unknown) -> float:
    assert isinstance(p, PValue)
    return p.value


@settings(max_examples=300, deadline=None)
@given(tallies(5000))
def test_wilson_equals_statsmodels(tally: Tally) -> None:
    rate = tally.rate()
    if tally.judged == 0:
        assert rate == Unknown()
        return
    low, high = proportion_confint(tally.held, tally.judged, alpha=0.05, method="wilson")
    assert isinstance(rate, Rate)
    assert rate.value == tally.held / tally.judged
    assert rate.low == pytest.approx(low, abs=1e-12)
    assert rate.high == pytest.approx(high, abs=1e-12)
    assert 0.0 <= rate.low <= rate.value <= rate.high <= 1.0


@settings(max_examples=400, deadline=None)
@given(tables())
def test_fisher_equals_scipy(fisher: Table) -> None:
    now, baseline = fisher.now, fisher.baseline
    grid = [[now.held, now.judged - now.held], [baseline.held, baseline.judged - baseline.held]]
    assert fisher.drop().value == pytest.approx(fisher_exact(grid, "less").pvalue, rel=1e-9, abs=1e-13)
    assert fisher.gain().value == pytest.approx(fisher_exact(grid, "greater").pvalue, rel=1e-9, abs=1e-13)
    assert fisher.change().value == pytest.approx(fisher_exact(grid).pvalue, rel=1e-9, abs=1e-13)


@settings(max_examples=200, deadline=None)
@given(st.lists(tables(6), min_size=1, max_size=4))
def test_stratified_equals_enumeration(strata_tables: list[Table]) -> None:
    strata = Strata(tables=tuple(strata_tables))
    drop, gain, either = enumerated(strata)
    assert value(strata.drop()) == pytest.approx(float(drop), abs=1e-15)
    assert value(strata.gain()) == pytest.approx(float(gain), abs=1e-15)
    assert value(strata.change()) == pytest.approx(float(either), abs=1e-15)


@settings(max_examples=200, deadline=None)
@given(tables())
def test_one_stratum_is_fisher(fisher: Table) -> None:
    strata = Strata(tables=(fisher,))
    assert strata.drop() == fisher.drop()
    assert strata.gain() == fisher.gain()
    assert strata.change() == fisher.change()


@settings(max_examples=100, deadline=None)
@given(st.lists(tables(40), min_size=1, max_size=12), st.randoms(use_true_random=False))
def test_the_order_of_strata_does_not_matter(strata_tables: list[Table], rng: random.Random) -> None:
    shuffled = list(strata_tables)
    rng.shuffle(shuffled)
    one, other = Strata(tables=tuple(strata_tables)), Strata(tables=tuple(shuffled))
    assert value(one.drop()) == pytest.approx(value(other.drop()), abs=1e-15)
    assert value(one.gain()) == pytest.approx(value(other.gain()), abs=1e-15)


@settings(max_examples=100, deadline=None)
@given(st.lists(tables(40), min_size=1, max_size=12))
def test_the_tails_cover_everything_once_and_the_observed_value_twice(strata_tables: list[Table]) -> None:
    strata = Strata(tables=tuple(strata_tables))
    distribution = strata.distribution()
    index = strata.held() - distribution.start
    observed = (
        distribution.weights[index] / sum(distribution.weights)
        if 0 <= index < len(distribution.weights)
        else 0.0
    )
    assert value(strata.drop()) + value(strata.gain()) - observed == pytest.approx(1.0, abs=1e-14)
    # the distribution is unimodal (a sum of hypergeometric counts), so the two-sided p holds the
    # whole tail on the observed side
    assert min(value(strata.drop()), value(strata.gain())) <= value(strata.change()) + 1e-15


@settings(max_examples=200, deadline=None)
@given(tallies(), st.integers(1, 10))
def test_pass_k(tally: Tally, k: int) -> None:
    share = tally.pass_k(k)
    if tally.judged < k:
        assert share == Unknown()
        return
    assert isinstance(share, Share)
    assert share.value == pytest.approx(math.prod((tally.held - i) / (tally.judged - i) for i in range(k)))
    every = tally.pass_k(1)
    assert isinstance(every, Share)
    assert share.value <= every.value + 1e-15
