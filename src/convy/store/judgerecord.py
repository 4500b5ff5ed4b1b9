"""What a run keeps of its judge's calibration (see docs/run-folder.md): run.json's `calibration`, the
figures of today's judge against the project's labels, measured before the run's first attempt
(absent when the project has no labels), with the whole attempts behind the corrected pass rate and
the disagreements the report lists."""

from __future__ import annotations

from convy.data import Data


class HeldTwice(Data, frozen=True, kw_only=True):
    """A whole labelled attempt (chosen at random, every claim labelled): whether the person holds it
    and whether the judge does."""

    person: bool
    judge: bool
    claims: int = 1
    """How many decisions the person made on it (its scenario's claims)."""


class Disagreed(Data, frozen=True, kw_only=True):
    """A labelled claim the judge decided otherwise than the person: where the label is, the
    scenario, the claim, both decisions, the judge's reason and how the label was chosen."""

    where: str
    scenario: str
    claim: str
    person: bool
    judge: bool
    reason: str = ""
    chosen: str = "random"


class JudgeRecord(Data, frozen=True, kw_only=True):
    """run.json's `calibration`: the judge's fingerprint (its digest), the labelled attempts and
    decisions behind the figures (chosen at random), the stale decisions, agreement, Cohen's κ and
    its interval (κ None where it is undefined: the person's decisions all one way), false passes and
    fails, sensitivity and specificity over whole attempts; `whole` and `disagreements` as above.
    Empty (no fingerprint): the run was not measured."""

    fingerprint: str = ""
    labels: int = 0
    decisions: int = 0
    stale: int = 0
    agreement: float | None = None
    kappa: float | None = None
    kappa_low: float | None = None
    kappa_high: float | None = None
    false_pass: float | None = None
    false_fail: float | None = None
    sensitivity: float | None = None
    specificity: float | None = None
    undefined_resamples: int = 0
    """The bootstrap's resamples whose κ was undefined, left out of κ's interval."""
    whole: tuple[HeldTwice, ...] = ()
    disagreements: tuple[Disagreed, ...] = ()
    cost: float | None = 0.0
    """What its judge calls cost in USD (part of the run's cost): 0 when every decision was reused,
    None when unknown."""

    @property
    def measured(self) -> bool:
        """Whether the run's judge was calibrated on labels at all."""
        return bool(self.fingerprint)


NOT_MEASURED = JudgeRecord()
"""A run without labels."""
