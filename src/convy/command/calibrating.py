"""`convy calibrate`: today's judge decides the project's labelled transcripts (the demo's servers
started first for `--demo`), and its agreement with the person is printed, figure by figure, with
every disagreement and the judge's reason, and written to results/calibration/<id>/."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

import convy
import convy.labels
from convy import Flags
from convy.command.console import Console
from convy.tools import Plural, Untrusted

EXIT_PASS, EXIT_CONFIG = 0, 2
JUDGE = (
    "project",
    "scenarios",
    "results",
    "model-url",
    "model-key",
    "user-model",
    "judge-model",
    "judge-url",
    "judge-key",
    "system-role",
    "judge-max-tokens",
    "judge-votes",
    "vote-temperature",
    "judge-panel",
    "model-timeout",
    "concurrency",
)
"""The settings `convy calibrate` takes as flags: where the project is, and what makes its judge."""


class Calibrating:
    """A calibration asked for on the command line, with the command's `console` and `environ`."""

    def __init__(self, console: Console, environ: Mapping[str, str]) -> None:
        self._console = console
        self._environ = dict(environ)

    def exit_code(self, arguments: argparse.Namespace) -> int:
        flags = Flags(JUDGE).given(arguments)
        follows = "" if (Path.cwd() / "scenarios").exists() else self.latest(flags)
        plan = convy.Plan(
            folder=Path.cwd(), flags=flags, environ=self._environ, demo=arguments.demo, follows=follows
        )
        with plan.opened() as opened:
            project = opened.project
            labels = Path(arguments.labels).resolve() if arguments.labels else project.root / "labels"
            if opened.demo and not arguments.labels and (Path.cwd() / "labels").is_dir():
                labels = Path.cwd() / "labels"  # what `convy label` wrote of a demo run
            calibration = convy.labels.Calibration(project, labels)
            done = calibration.done(convy.labels.CalibrationLines(self.progress, False))
            self.show(done)
            folder = done.written(calibration.folder)
            self._console.out.write(
                f"convy: wrote {folder / 'calibration.json'} and {folder / 'calibration.jsonl'}\n"
            )
            return EXIT_PASS
        return EXIT_CONFIG

    def progress(self, line: str) -> None:
        """A line of the calibration's progress, on stderr."""
        self._console.err.write(line + "\n")

    def latest(self, flags: Mapping[str, object]) -> str:
        """The newest run folder of the demo's agent under `results` in a folder with no project of
        its own (no scenarios): calibrating after `convy run --demo` calibrates the demo's judge."""
        runs = sorted(
            path for path in (Path.cwd() / str(flags.get("results", "results")) / "support").glob("*")
        )
        return str(runs[-1]) if runs else ""

    def votes(self, judge: convy.labels.JudgeFingerprint) -> str:
        """How the judge votes: `1 vote`, `3 votes at temperature 1`, `votes: failing`."""
        if judge.votes == "failing":
            shown = "1 vote, 3 where a claim fails"
        else:
            shown = Plural(int(judge.votes), "vote").text()
        if judge.votes != "1" or judge.panel:
            shown += f" (later ones at temperature {judge.temperature:g})"
        return shown

    def show(self, done: convy.labels.Calibrated) -> None:
        out = self._console.out
        file = done.file
        judge = file.fingerprint
        used = len(done.lines)
        out.write(
            f"convy: the judge {Untrusted(text=judge.model).console(100)!r} ({judge.origin}, prompt "
            f"{judge.prompt}, {self.votes(judge)}, "
            f"{'no panel' if not judge.panel else 'panel ' + ', '.join(judge.panel)}) "
            f"on {Plural(used, 'labelled attempt').text()} "
            f"({done.reused} reused: no judge call)\n"
        )
        if done.stale:
            out.write(f"convy: {Plural(len(done.stale), 'stale decision').text()} left out:\n")
            for stale in done.stale:
                text = Untrusted(text=stale.claim).console(120)
                out.write(f"  {stale.where} {stale.scenario}: {text!r}: {stale.why}\n")
        for line in done.lines:
            if line.failure:
                out.write(
                    f"convy: the judge gave no decision on {line.where}: "
                    f"{Untrusted(text=line.failure).console(300)}\n"
                )
        out.write(
            f"\nOverall (labels chosen at random): {file.labels} labelled attempts, "
            f"{file.decisions} decisions\n"
        )
        out.write(f"  {self.figures(file)}\n")
        out.write(
            f"  sensitivity {self.share(file.sensitivity)} · specificity {self.share(file.specificity)}"
            " (whole attempts)\n"
        )
        if file.claims:
            out.write("\nPer claim (every label):\n")
        for each in file.claims:
            out.write(f"  {each.scenario}: {Untrusted(text=each.claim).console(120)!r}\n")
            out.write(f"    {each.decisions} decisions · {self.figures(each)}\n")
        out.write(f"\nDisagreements: {len(done.disagreements) or 'none'}\n")
        for disagreement in done.disagreements:
            person = self.said(disagreement.person, disagreement.person_grade)
            judged = self.said(disagreement.judge, disagreement.judge_grade)
            chosen = " (chosen: failing)" if disagreement.chosen == "failing" else ""
            out.write(
                f"  {disagreement.where} {disagreement.scenario}{chosen}: "
                f"{Untrusted(text=disagreement.claim).console(120)!r}\n"
                f"    person: {person}; judge: {judged}: {Untrusted(text=disagreement.reason).console(300)}\n"
            )

    def figures(self, file: convy.labels.CalibrationFile | convy.labels.ClaimFigures) -> str:
        """The figures of a set of decisions; where κ is undefined, why, and never κ 1.00."""
        kappa = convy.labels.KappaText(
            kappa=file.kappa,
            low=file.kappa_low,
            high=file.kappa_high,
            decisions=file.decisions,
            undefined_resamples=file.undefined_resamples,
        )
        return (
            f"agreement {self.share(file.agreement)} · {kappa.text()} · "
            f"false passes {self.share(file.false_pass)} · false fails {self.share(file.false_fail)}"
            + (f"\n    {kappa.why()}" if kappa.undefined else "")
        )

    def share(self, value: float | None) -> str:
        return "—" if value is None else f"{value:.0%}"

    def said(self, passed: bool, grade: str) -> str:
        decision = "holds" if passed else "does not hold"
        return f"{grade} ({decision})" if grade else decision
