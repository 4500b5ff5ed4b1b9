"""Every run calibrates (decision 42): with labels (setting `labels`, `none` off), today's judge
decides them before the first attempt, reusing decisions of every calibration.jsonl of the project
(results/calibration/<id>/, earlier run folders) and of the baseline's folder; the run folder gets
calibration.jsonl and run.json `calibration`."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import httpx
import msgspec

from convy.conduct.calibrated import Calibrated
from convy.conduct.calibration import QUIET, Calibration, CalibrationProgress, Told
from convy.play.agent import Usage
from convy.play.price import UNPRICED, Priced, Pricing
from convy.project.labels import Labels
from convy.project.project import Project
from convy.store.atomic import AtomicFile
from convy.store.judgerecord import NOT_MEASURED, Disagreed, HeldTwice, JudgeRecord

OFF = "none"
"""The `labels` setting that turns calibration off."""
LINES = "calibration.jsonl"
"""The judge's decisions on the labelled attempts, one line each, in a run folder."""


class RunCalibration(Calibration, frozen=True):
    """A run's calibration: the project's labels (`labels`), and the folders whose calibration.jsonl
    may lend a decision besides results/ (`also`: the baseline run's, as Calibration reads them)."""

    @classmethod
    def of(cls, project: Project, also: tuple[Path, ...] = ()) -> RunCalibration:
        """The calibration the `labels` setting asks for (relative to the project)."""
        setting = project.settings.labels
        return cls(project, project.root / setting, also)

    @property
    def on(self) -> bool:
        """Whether there are labels to calibrate on: the setting is not `none` and the folder holds
        label files."""
        if self.project.settings.labels == OFF or not self.labels.is_dir():
            return False
        return bool(Labels(self.labels, self.project.root).files())

    def checked(self) -> None:
        """Read the labels, so a malformed file is exit 2 (file:line) before any request."""
        if self.on:
            self.labelled()

    async def measured(
        self, client: httpx.AsyncClient, folder: Path, pricing: Pricing = UNPRICED, told: Told = QUIET
    ) -> JudgeRecord:
        """Calibrate (when there are labels) with the run's `client`, write calibration.jsonl into
        the run `folder` — each decision appended as it comes, so a run stopped while it calibrates
        keeps them for the next — and return run.json's `calibration`, its judge calls priced at
        `pricing` (the tokens their answers report; unknown for a project's own models.py); its
        progress `told`."""
        if not self.on:
            return NOT_MEASURED
        tokens = JudgeTokens()
        hooks = client.event_hooks
        client.event_hooks = {**hooks, "response": [*hooks.get("response", []), tokens.read]}
        folder.mkdir(parents=True, exist_ok=True)
        kept = KeptLines(folder / LINES, told)
        try:
            done = await self.calibrated(client, kept.told)
        finally:
            client.event_hooks = hooks
            kept.close()
        AtomicFile(folder / LINES).write_bytes(
            b"".join(msgspec.json.encode(line) + b"\n" for line in done.lines)
        )
        own = (self.project.root / "models.py").exists() and any(not line.reused for line in done.lines)
        cost = None if own else Priced(pricing.judge, tokens.usage).usd()
        return msgspec.structs.replace(self.record(done), cost=cost)

    def record(self, done: Calibrated) -> JudgeRecord:
        """run.json's `calibration` of a calibration done."""
        file = done.file
        whole = tuple(
            HeldTwice(
                person=all(line.person.values()),
                judge=all(result.passed for result in line.decisions if result.claim in line.person),
                claims=len(line.person),
            )
            for line in done.lines
            if not line.failure and line.chosen == "random" and len(line.person) == len(line.decisions)
        )
        return JudgeRecord(
            fingerprint=file.fingerprint.digest,
            labels=file.labels,
            decisions=file.decisions,
            stale=file.stale,
            agreement=file.agreement,
            kappa=file.kappa,
            kappa_low=file.kappa_low,
            kappa_high=file.kappa_high,
            false_pass=file.false_pass,
            false_fail=file.false_fail,
            sensitivity=file.sensitivity,
            specificity=file.specificity,
            undefined_resamples=file.undefined_resamples,
            whole=whole,
            disagreements=tuple(
                Disagreed(
                    where=each.where,
                    scenario=each.scenario,
                    claim=each.claim,
                    person=each.person,
                    judge=each.judge,
                    reason=each.reason,
                    chosen=each.chosen,
                )
                for each in done.disagreements
            ),
        )


class KeptLines:
    """The judge's decisions appended to `path` as each comes (flushed, never the failures: those
    are asked again), then handed on to `then`."""

    def __init__(self, path: Path, then: Told) -> None:
        self.path = path
        self.then = then
        self.file: BinaryIO | None = None

    def told(self, progress: CalibrationProgress) -> None:
        line = progress.line
        if line is not None and not line.failure and not line.reused:
            if self.file is None:
                self.file = self.path.open("ab")
            self.file.write(msgspec.json.encode(line) + b"\n")
            self.file.flush()
        self.then(progress)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


class JudgeTokens:
    """The tokens the judge's answers report while a calibration runs (a response hook of the run's
    client): None until one answered, a count unknown when an answer did not say it."""

    def __init__(self) -> None:
        self.usage: Usage | None = None

    async def read(self, response: httpx.Response) -> None:
        if not response.is_success:
            return
        await response.aread()
        try:
            said = msgspec.json.decode(response.content, type=Reported)
        except (msgspec.DecodeError, UnicodeDecodeError):
            said = Reported()
        self.usage = Usage(input=said.usage.prompt_tokens, output=said.usage.completion_tokens).plus(
            self.usage
        )


class Counts(msgspec.Struct, frozen=True):
    """An OpenAI-compatible answer's `usage`, as much of it as a price needs."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Reported(msgspec.Struct, frozen=True):
    """The part of a judge's answer that says what it spent."""

    usage: Counts = Counts()
