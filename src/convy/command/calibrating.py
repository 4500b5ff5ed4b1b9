"""`convy calibrate`: today's judge decides the project's labelled transcripts (the demo's servers
started first for `--demo`), and its agreement with the person is printed, figure by figure, with
every disagreement and the judge's reason, and written to results/calibration/<id>/."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Mapping
from pathlib import Path

import convy
from convy import Flags, Plural, Sources, Untrusted
from convy.command.console import Console

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
        with contextlib.ExitStack() as stack:
            environ = dict(self._environ)
            if arguments.demo:
                demo = stack.enter_context(convy.DemoServers())
                environ.update(demo.environ())
                results = Path.cwd() / str(flags.get("results", "results"))
                flags = {**demo.flags(), **flags, "results": str(results), "project": str(demo.project)}
            sources = Sources(flags, environ, Path.cwd())
            project = convy.Project(sources.settings(), sources, environ)
            labels = Path(arguments.labels).resolve() if arguments.labels else project.root / "labels"
            calibration = convy.Calibration(project, labels)
            done = calibration.done()
            self.show(done)
            folder = done.written(calibration.folder)
            self._console.out.write(
                f"convy: wrote {folder / 'calibration.json'} and {folder / 'calibration.jsonl'}\n"
            )
            return EXIT_PASS
        return EXIT_CONFIG

    def votes(self, judge: convy.JudgeFingerprint) -> str:
        """How the judge votes: `1 vote`, `3 votes at temperature 1`, `votes: failing`."""
        if judge.votes == "failing":
            shown = "1 vote, 3 where a claim fails"
        else:
            shown = Plural(int(judge.votes), "vote").text()
        if judge.votes != "1" or judge.panel:
            shown += f" (later ones at temperature {judge.temperature:g})"
        return shown

    def show(self, done: convy.Calibrated) -> None:
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

    def figures(self, file: convy.CalibrationFile | convy.ClaimFigures) -> str:
        """The figures of a set of decisions; where κ is undefined, why, and never κ 1.00."""
        kappa = convy.KappaText(
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
