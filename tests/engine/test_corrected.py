"""The pass rate corrected for the judge (docs/judge.md), figure by figure: the formula computed here
from the counts (checks deterministic, not corrected), clipped to [0, 1], an interval that always
contains the estimate and is the same for the same run, and why it is not shown."""

from __future__ import annotations

import itertools

from convy.compare.corrected import CorrectedRate, Correction, JudgedAttempts
from convy.store.judgerecord import HeldTwice, JudgeRecord


def labels(
    holds: int, judge_holds: int, nots: int, judge_nots: int, claims: int = 1
) -> tuple[HeldTwice, ...]:
    return tuple(
        [HeldTwice(person=True, judge=i < judge_holds, claims=claims) for i in range(holds)]
        + [HeldTwice(person=False, judge=i >= judge_nots, claims=claims) for i in range(nots)]
    )


def corrected(
    attempts: JudgedAttempts, labelled: tuple[HeldTwice, ...], min_labels: int = 20
) -> CorrectedRate:
    return Correction.of(attempts, JudgeRecord(fingerprint="f", whole=labelled)).corrected(min_labels)


def test_the_judged_part_is_corrected_and_the_checks_are_not() -> None:
    attempts = JudgedAttempts(judged=40, checked=30, held=21)
    shown = corrected(attempts, labels(10, 9, 10, 8))
    se, sp, q = 9 / 10, 8 / 10, 21 / 30
    assert shown.value == 30 / 40 * min(1.0, max(0.0, (q + sp - 1) / (se + sp - 1)))
    assert shown.sensitivity == se and shown.specificity == sp
    assert shown.low is not None and shown.high is not None
    assert shown.low <= shown.value <= shown.high
    assert shown.decisions == 20 and shown.labels == 20 and shown.why == ""
    assert corrected(attempts, labels(10, 9, 10, 8)) == shown, "seeded: the same run, the same interval"


def test_the_correction_is_clipped_to_0_and_1() -> None:
    high = corrected(JudgedAttempts(judged=10, checked=10, held=10), labels(10, 8, 10, 9))
    low = corrected(JudgedAttempts(judged=10, checked=10, held=0), labels(10, 8, 10, 9))
    assert high.value == 1.0 and low.value == 0.0
    assert high.high == 1.0 and low.low == 0.0


def test_the_interval_contains_the_estimate_whatever_the_counts() -> None:
    for judged, held, (holds, judge_holds) in itertools.product((3, 12, 40), (0, 1, 2), ((10, 10), (12, 9))):
        attempts = JudgedAttempts(judged=judged, checked=judged, held=min(held * judged // 2, judged))
        shown = corrected(attempts, labels(holds, judge_holds, 12, 11))
        assert shown.value is not None and shown.low is not None and shown.high is not None
        assert shown.low <= shown.value <= shown.high, (judged, held, holds)


def test_why_it_is_not_shown() -> None:
    attempts = JudgedAttempts(judged=10, checked=10, held=5)
    few = corrected(attempts, labels(5, 5, 5, 5))
    assert few.value is None and few.why == "too few labels: 10 labelled decisions, min-labels is 20"
    weak = corrected(attempts, labels(10, 7, 10, 6))
    assert weak.value is None and weak.why == "se + sp − 1 is 0.30, below 0.5"
    none = corrected(attempts, ())
    assert none.value is None and none.why == "no labels chosen at random with every claim labelled"
    counted = corrected(attempts, labels(5, 5, 5, 5, claims=2))
    assert counted.value is not None, "20 decisions: 10 attempts of 2 claims"
