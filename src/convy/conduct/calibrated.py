"""What a calibration of the judge leaves (see docs/labels.md): the judge's fingerprint, one line per
labelled attempt (calibration.jsonl: the judge's decisions and votes) and the figures overall and
per claim (calibration.json), written to results/calibration/<id>/."""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec

from convy.data import Data
from convy.play.outcome import ClaimResult, Vote
from convy.project.labels import Stale
from convy.store.atomic import AtomicFile


class JudgeFingerprint(Data, frozen=True, kw_only=True):
    """What makes the judge the judge it is: its model's name, its URL's origin (scheme, host and
    port; `models.py` for a project's own models), the judge prompt's version, its votes per claim
    and its panel (further judges, by `model@origin`)."""

    model: str
    origin: str
    prompt: str
    votes: str = "1"
    panel: tuple[str, ...] = ()
    temperature: float = 0.0
    """The temperature of later votes when the judge votes (`vote-temperature`); 0 when it does not."""

    @property
    def digest(self) -> str:
        """A short hash of the whole fingerprint: equal judges, equal digests."""
        return hashlib.sha256(msgspec.json.encode(self)).hexdigest()[:16]


class CalibrationLine(Data, frozen=True, kw_only=True):
    """One labelled attempt as calibrated, a line of calibration.jsonl: where its label is, how it
    was chosen, hashes of its transcript and of its scenario's claims, the judge's fingerprint, the
    person's pass (and grade) per claim, the judge's decisions and votes per claim — reused from an
    earlier calibration, or `failure` saying why the judge gave none."""

    scenario: str
    where: str
    chosen: str
    transcript: str
    claims: str
    fingerprint: str
    person: dict[str, bool]
    grades: dict[str, str] = {}
    decisions: tuple[ClaimResult, ...] = ()
    votes: dict[str, tuple[Vote, ...]] = {}
    reused: bool = False
    failure: str = ""


class ClaimFigures(Data, frozen=True, kw_only=True):
    """The figures of one claim of one scenario, over every label of it (both ways of choosing):
    sensitivity and specificity here are the claim's (1 − false fails, 1 − false passes)."""

    scenario: str
    claim: str
    labels: int
    decisions: int
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


class CalibrationFile(Data, frozen=True, kw_only=True):
    """calibration.json: the fingerprint, how many labelled attempts and decisions (those chosen at
    random, behind every figure here) and stale decisions, the overall figures, the attempts the
    judge could not decide (`unjudged`), and the figures per claim."""

    fingerprint: JudgeFingerprint
    labels: int
    decisions: int
    stale: int
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
    unjudged: int = 0
    claims: tuple[ClaimFigures, ...] = ()


class Disagreement(Data, frozen=True, kw_only=True):
    """A claim the judge decided otherwise than the person: the label's place, both decisions (and
    grades) and the judge's reason."""

    where: str
    scenario: str
    claim: str
    chosen: str
    person: bool
    judge: bool
    reason: str
    person_grade: str = ""
    judge_grade: str = ""
    reused: bool = False


class Calibrated(msgspec.Struct, frozen=True, kw_only=True):
    """A calibration done: its id (`name`), its figures, its lines, the disagreements and the stale
    decisions."""

    name: str
    file: CalibrationFile
    lines: tuple[CalibrationLine, ...]
    disagreements: tuple[Disagreement, ...]
    stale: tuple[Stale, ...]

    @property
    def reused(self) -> int:
        """How many labelled attempts took an earlier calibration's decisions (no judge call)."""
        return sum(line.reused for line in self.lines)

    def written(self, folder: Path) -> Path:
        """calibration.json and calibration.jsonl written to `folder`/<id>/; that folder."""
        target = folder / self.name
        target.mkdir(parents=True, exist_ok=True)
        AtomicFile(target / "calibration.json").write_bytes(
            msgspec.json.format(msgspec.json.encode(self.file), indent=2) + b"\n"
        )
        AtomicFile(target / "calibration.jsonl").write_bytes(
            b"".join(msgspec.json.encode(line) + b"\n" for line in self.lines)
        )
        return target
