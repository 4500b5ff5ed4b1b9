"""Calibrating the judge against a project's labels (see docs/labels.md): today's judge decides every
labelled transcript's claims (judge calls only), a decision reused from an earlier calibration
with the same fingerprint, transcript and claims, and its decisions are set against the person's.
What the files of results/calibration/<id>/ hold is in calibrated.py."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from pathlib import Path

import httpx
import msgspec

from convy.compare.agreement import Agreement, Paired, Separation
from convy.conduct.assembly import Assembly
from convy.conduct.calibrated import (
    Calibrated,
    CalibrationFile,
    CalibrationLine,
    ClaimFigures,
    Disagreement,
    JudgeFingerprint,
)
from convy.conduct.demorun import PROJECT
from convy.conduct.run import RunId
from convy.errors import ConfigurationError
from convy.play.busy import Busy, GaveUp
from convy.play.model import ModelFailure, Models
from convy.play.outcome import ClaimResult, Turn, Vote
from convy.play.prompts import JUDGE_VERSION
from convy.play.reuse import Dialogue
from convy.play.votes import Jury
from convy.project.jury import ONE
from convy.project.labels import Labelled, Labels, Stale
from convy.project.project import Project
from convy.project.scenario import Claim

FOLDER = "calibration"
"""Where calibrations go, under the project's results folder."""

DEMO = PROJECT
"""The bundled demo's project: its judge's origin is `demo`, whatever port its server was given, so
a second demo run reuses the first one's calibration."""


class CalibrationProgress(msgspec.Struct, frozen=True, kw_only=True):
    """How far a calibration is: `done` of `total` labelled attempts decided, `line` the one just
    decided (None before the first); the first told also carries the `stale` decisions left out,
    each at its file:line."""

    total: int
    done: int = 0
    line: CalibrationLine | None = None
    stale: tuple[Stale, ...] = ()


Told = Callable[[CalibrationProgress], None]
"""What is told of a calibration's progress."""


class Unshown:
    """A calibration's progress shown nowhere."""

    def __call__(self, progress: CalibrationProgress) -> None:
        return None


QUIET = Unshown()
"""Where a calibration's progress goes when no one shows it."""


class Calibration(msgspec.Struct, frozen=True):
    """A project's judge and the labels it is calibrated on (`labels`: the folder, default the
    project's `labels/`); `also`: further folders (a baseline run's) whose calibration.jsonl the
    judge's decisions may be reused from, besides every one under the project's results; `origin`:
    what the fingerprint names as the judge's origin ("": its URL's; the demo's judge is `demo`,
    whatever port its server has)."""

    project: Project
    labels: Path
    also: tuple[Path, ...] = ()
    origin: str = ""

    @property
    def folder(self) -> Path:
        """results/calibration: every calibration of the project."""
        return self.project.results / FOLDER

    def fingerprint(self, models: Models) -> JudgeFingerprint:
        """The judge as the settings make it: its model, its URL's origin, the prompt's version,
        its votes (with the temperature of later ones when it votes) and its panel (`model@origin`
        each; by name for a models.py's)."""
        settings = self.project.settings
        votes = settings.votes()
        panel = settings.panel().named if settings.judge_panel else tuple(m.name for m in models.panel)
        voting = votes != ONE or bool(panel)
        judge = JudgeFingerprint(
            model=models.judge.name,
            origin="",
            prompt=JUDGE_VERSION,
            votes=votes.text,
            panel=panel,
            temperature=settings.vote_temperature if voting else 0.0,
        )
        if self.origin:
            return msgspec.structs.replace(judge, origin=self.origin)
        if self.project.root.resolve() == DEMO:
            return msgspec.structs.replace(judge, origin="demo")
        if (self.project.root / "models.py").exists():
            return msgspec.structs.replace(judge, origin="models.py")
        url = httpx.URL(settings.judge_url or settings.model_url)
        port = f":{url.port}" if url.port else ""
        return msgspec.structs.replace(judge, origin=f"{url.scheme}://{url.host}{port}")

    def labelled(self) -> tuple[tuple[Labelled, ...], tuple[Stale, ...]]:
        """The labelled attempts used and the stale decisions; ConfigurationError (exit 2) for a
        malformed file, or when there is no label at all."""
        labels = Labels(self.labels, self.project.root)
        if not labels.files():
            raise ConfigurationError(
                "labels", f"no labels at {self.labels} (label files are labels/*.yaml in the project)"
            )
        used, stale = labels.against(self.project.every())
        if not used and not stale:
            raise ConfigurationError("labels", f"the label files at {self.labels} hold no labelled attempt")
        return used, stale

    def earlier(self, fingerprint: str) -> dict[tuple[str, str], CalibrationLine]:
        """The judge's decisions of earlier calibrations with this fingerprint, by transcript and
        claims: those of `convy calibrate` and of runs under the project's results, and of `also`."""
        known: dict[tuple[str, str], CalibrationLine] = {}
        found = sorted(set(self.project.results.glob("*/*/calibration.jsonl")))
        for path in [*found, *(folder / "calibration.jsonl" for folder in self.also)]:
            try:
                text = path.read_bytes()
            except OSError:
                continue
            for raw in text.splitlines():
                try:
                    line = msgspec.json.decode(raw, type=CalibrationLine)
                except msgspec.DecodeError:
                    continue
                if line.fingerprint == fingerprint and not line.failure:
                    known.setdefault((line.transcript, line.claims), line)
        return known

    def done(self, told: Told = QUIET) -> Calibrated:
        """The calibration done with a client of its own (the `model-timeout` setting's timeout),
        its progress `told`."""
        timeout = self.project.settings.model_timeout

        async def calibrating() -> Calibrated:
            limit = httpx.Timeout(timeout, connect=min(timeout, 30.0))
            async with httpx.AsyncClient(timeout=limit) as client:
                return await self.calibrated(client, told)

        return asyncio.run(calibrating())

    async def calibrated(self, client: httpx.AsyncClient, told: Told = QUIET) -> Calibrated:
        """Every labelled attempt decided by today's judge (or a reused decision), and the figures;
        `told` of the stale decisions first, then of each labelled attempt as it is decided."""
        used, stale = self.labelled()
        told(CalibrationProgress(total=len(used), stale=stale))
        assembly = Assembly(self.project)
        settings = self.project.settings
        if not (self.project.root / "models.py").exists():
            assembly.check_judge_key()
            if not (settings.judge_model or settings.user_model):
                raise ConfigurationError("judge-model", "is not set: name the judge's model")
        models = assembly.models(client, ())
        fingerprint = self.fingerprint(models)
        known = self.earlier(fingerprint.digest)
        judge = Jury(models, settings.votes()).judge(lambda model: model)

        async def decided(labelled: Labelled) -> CalibrationLine:
            turns = tuple(
                Turn(user=said.user, agent=said.agent, seconds=0.0) for said in labelled.label.transcript
            )
            key = (Dialogue.of(labelled.label.scenario, turns).digest, ClaimsKey(labelled.claims).digest)
            line = CalibrationLine(
                scenario=labelled.label.scenario,
                where=labelled.where,
                chosen=labelled.label.chosen,
                transcript=key[0],
                claims=key[1],
                fingerprint=fingerprint.digest,
                person=labelled.passes,
                grades=labelled.grades,
            )
            earlier = known.get(key)
            if earlier is not None:
                return msgspec.structs.replace(
                    line, decisions=earlier.decisions, votes=earlier.votes, reused=True
                )
            try:
                answer = await judge.decide(labelled.claims, turns)
            except (ModelFailure, Busy, GaveUp) as error:
                return msgspec.structs.replace(line, failure=str(error) or type(error).__name__)
            results = answer.verdict.claims
            votes = {
                result.claim: result.cast
                or (Vote(judge=models.judge.name, passed=result.passed, grade=result.grade),)
                for result in results
            }
            return msgspec.structs.replace(line, decisions=results, votes=votes)

        lines: list[CalibrationLine | None] = [None] * len(used)
        waiting = iter(enumerate(used))
        count = [0]

        async def decider() -> None:
            # `concurrency` deciders take the labels in order: a task per label waiting on one
            # semaphore would make tens of thousands of labels quadratic
            for position, labelled in waiting:
                line = await decided(labelled)
                lines[position] = line
                count[0] += 1
                told(CalibrationProgress(total=len(used), done=count[0], line=line))

        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(settings.concurrency, len(used)))):
                group.create_task(decider())
        ended = tuple(line for line in lines if line is not None)
        return Figuring(fingerprint, ended, tuple(stale)).calibrated(RunId.new().text)


class ClaimsKey(msgspec.Struct, frozen=True):
    """A scenario's claims as a key: a hash of each claim's text and grades, in order."""

    claims: tuple[Claim, ...]

    @property
    def digest(self) -> str:
        return hashlib.sha256(msgspec.json.encode(self.claims)).hexdigest()


class Figuring(msgspec.Struct, frozen=True):
    """The judge's lines set against the person's decisions: the figures overall (labels chosen at
    random) and per claim (every label), and the disagreements."""

    fingerprint: JudgeFingerprint
    lines: tuple[CalibrationLine, ...]
    stale: tuple[Stale, ...]

    def seed(self, lines: tuple[CalibrationLine, ...]) -> int:
        """The bootstrap's seed: the labels and decisions it is over, so the same set gives the same
        interval (labels chosen at failing ones leave the overall interval as it was)."""
        digest = hashlib.sha256(msgspec.json.encode([(line.transcript, line.person) for line in lines]))
        return int.from_bytes(digest.digest()[:8], "big")

    def judged(self, line: CalibrationLine) -> dict[str, ClaimResult]:
        return {result.claim: result for result in line.decisions}

    def pairs(self, line: CalibrationLine) -> tuple[Paired, ...]:
        judged = self.judged(line)
        return tuple(
            Paired(person=person, judge=judged[claim].passed)
            for claim, person in line.person.items()
            if claim in judged
        )

    def calibrated(self, name: str) -> Calibrated:
        decided = tuple(line for line in self.lines if not line.failure)
        random_lines = tuple(line for line in decided if line.chosen == "random")
        overall = Agreement(
            tuple(self.pairs(line) for line in random_lines), self.seed(random_lines)
        ).agreed()
        whole = Separation(
            tuple(
                Paired(person=all(line.person.values()), judge=all(p.judge for p in self.pairs(line)))
                for line in random_lines
                if len(line.person) == len(line.decisions)
            )
        )
        file = CalibrationFile(
            fingerprint=self.fingerprint,
            labels=overall.labels,
            decisions=overall.decisions,
            stale=len(self.stale),
            agreement=overall.agreement,
            kappa=overall.kappa,
            kappa_low=overall.kappa_low,
            kappa_high=overall.kappa_high,
            false_pass=overall.false_pass,
            false_fail=overall.false_fail,
            undefined_resamples=overall.undefined_resamples,
            sensitivity=whole.sensitivity(),
            specificity=whole.specificity(),
            unjudged=len(self.lines) - len(decided),
            claims=self.per_claim(decided),
        )
        return Calibrated(
            name=name,
            file=file,
            lines=self.lines,
            disagreements=self.disagreements(decided),
            stale=self.stale,
        )

    def per_claim(self, decided: tuple[CalibrationLine, ...]) -> tuple[ClaimFigures, ...]:
        order: dict[tuple[str, str], list[tuple[Paired, ...]]] = {}
        for line in decided:
            judged = self.judged(line)
            for claim, person in line.person.items():
                if claim in judged:
                    order.setdefault((line.scenario, claim), []).append(
                        (Paired(person=person, judge=judged[claim].passed),)
                    )
        figures: list[ClaimFigures] = []
        for (scenario, claim), attempts in order.items():
            agreed = Agreement(tuple(attempts), self.seed(decided)).agreed()
            pairs = [pair for attempt in attempts for pair in attempt]
            figures.append(
                ClaimFigures(
                    scenario=scenario,
                    claim=claim,
                    **msgspec.structs.asdict(agreed),
                    sensitivity=Separation(tuple(pairs)).sensitivity(),
                    specificity=Separation(tuple(pairs)).specificity(),
                )
            )
        return tuple(figures)

    def disagreements(self, decided: tuple[CalibrationLine, ...]) -> tuple[Disagreement, ...]:
        found: list[Disagreement] = []
        for line in decided:
            judged = self.judged(line)
            for claim, person in line.person.items():
                result = judged.get(claim)
                if result is not None and result.passed != person:
                    found.append(
                        Disagreement(
                            where=line.where,
                            scenario=line.scenario,
                            claim=claim,
                            chosen=line.chosen,
                            person=person,
                            person_grade=line.grades.get(claim, ""),
                            judge=result.passed,
                            judge_grade=result.grade or "",
                            reason=result.reason,
                            reused=line.reused,
                        )
                    )
        return tuple(found)
