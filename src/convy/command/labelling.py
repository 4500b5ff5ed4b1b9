"""`convy label RUN`: a person asked in a terminal, one judged attempt at a time, the transcript and
then each claim; blind (the judge's decision and reason shown only after the person answered that
claim); each answer written to the labels file as it is given."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

import convy
import convy.labels
from convy import ConfigurationError, Flags
from convy.command.console import Console
from convy.tools import Plural, Untrusted

EXIT_PASS, EXIT_CONFIG, EXIT_INTERRUPTED = 0, 2, 130
PROJECT = ("project", "scenarios")
"""The settings `convy label` takes as flags: where the project (its scenarios' grades) is."""
WIDE = 2000
"""The most characters of one line of the transcript shown."""


class Labelling:
    """A labelling asked for on the command line, with the command's `console`, `environ` and the
    person's `answers` (stdin)."""

    def __init__(self, console: Console, environ: Mapping[str, str], answers: TextIO | None = None) -> None:
        self._console = console
        self._environ = dict(environ)
        self._answers = answers if answers is not None else sys.stdin
        self._given = 0
        self._quit = False

    def exit_code(self, arguments: argparse.Namespace) -> int:
        if not self._answers.isatty():
            raise ConfigurationError(
                "stdin",
                "is not a terminal: convy label asks a person, one claim at a time (run it in a terminal)",
            )
        flags = Flags(PROJECT).given(arguments)
        plan = convy.Plan(folder=Path.cwd(), flags=flags, environ=self._environ, follows=str(arguments.run))
        with plan.opened() as opened:
            project = opened.project
            # a demo run's labels go to the current folder, never into the installed demo
            written = Path.cwd() if opened.demo else project.root
        claims = {d.scenario.name: d.scenario.claims for d in project.every()}
        with tempfile.TemporaryDirectory(prefix="convy-label-") as scratch:
            run, name = convy.labels.LabelledRun(Path(arguments.run)).read(Path(scratch) / "run")
            draw = convy.labels.LabelDraw(run=run, id=name, claims=claims, failing=arguments.failing)
            target = (
                Path(arguments.to) if arguments.to else written / "labels" / convy.labels.LabelName(name).file
            )
            sink = convy.labels.LabelSink(target.absolute(), written)
            asked = draw.drawn(arguments.count, sink.kept())
            out = self._console.out
            out.write(
                f"convy: {Plural(len(asked), 'attempt').text()} of run {name} to label, into {target}\n"
                "  answer y (holds), n (does not), a grade's name or number, s (skip the rest of this "
                "attempt), q (quit)\n"
            )
            try:
                for number, attempt in enumerate(asked, 1):
                    self.asked(draw, sink, attempt, f"{number}/{len(asked)}")
                    if self._quit:
                        break
            except KeyboardInterrupt:
                out.write(f"\nconvy: stopped; {Plural(self._given, 'answer').text()} kept in {target}\n")
                return EXIT_INTERRUPTED
            out.write(f"convy: {Plural(self._given, 'answer').text()} written to {target}\n")
            return EXIT_PASS

    def asked(
        self,
        draw: convy.labels.LabelDraw,
        sink: convy.labels.LabelSink,
        attempt: convy.labels.Unlabelled,
        place: str,
    ) -> None:
        """One attempt: its transcript, then each claim asked and the judge's decision shown after."""
        out = self._console.out
        out.write(f"\n[{place}] {Untrusted(text=attempt.scenario).console(200)}, attempt {attempt.index}\n")
        for turn in attempt.turns:
            self.said("user", turn.user)
            self.said("agent", turn.agent)
        before = sink.text()
        decisions: dict[str, bool | str] = {}
        label: dict[str, object] = {
            "scenario": attempt.scenario,
            "source": {"run": draw.id, "index": attempt.index},
            **({"chosen": "failing"} if draw.chosen(attempt) == "failing" else {}),
            "transcript": [{"user": turn.user, "agent": turn.agent} for turn in attempt.turns],
            "decisions": decisions,
        }
        for result in attempt.judged:
            grades = attempt.grades.get(result.claim, ())
            answer = self.answer(result.claim, grades)
            if answer is None:
                return
            decisions[result.claim] = answer
            sink.written(before, label)
            self._given += 1
            judged = "holds" if result.passed else "does not hold"
            if result.grade:
                judged = f"{result.grade} ({judged})"
            same = result.passed == answer if isinstance(answer, bool) else result.grade == answer
            agreed = "you agree" if same else "you differ"
            out.write(f"  judge: {judged}: {Untrusted(text=result.reason).console(500)} ({agreed})\n")

    def answer(self, claim: str, grades: tuple[str, ...]) -> bool | str | None:
        """The person's answer on one claim: True/False, a grade's name, or None to skip the rest
        (and to quit, on `q` or the end of input, which marks the labelling quit)."""
        out = self._console.out
        choices = " / ".join(f"{n} {grade}" for n, grade in enumerate(grades, 1)) if grades else "y / n"
        while True:
            out.write(f"  claim: {Untrusted(text=claim).console(500)}\n  [{choices} / s / q] > ")
            out.flush()
            line = self._answers.readline()
            said = line.strip()
            if not line or said.lower() == "q":
                self._quit = True
                return None
            if said.lower() == "s":
                return None
            if not grades and said.lower() in ("y", "n"):
                return said.lower() == "y"
            if grades and said in grades:
                return said
            if grades and said.isdigit() and 1 <= int(said) <= len(grades):
                return grades[int(said) - 1]
            out.write(f"  (answer {choices}, s or q)\n")

    def said(self, who: str, text: str) -> None:
        lines = text.splitlines() or [""]
        for n, line in enumerate(lines):
            lead = f"  {who}: " if n == 0 else " " * (len(who) + 4)
            self._console.out.write(f"{lead}{Untrusted(text=line).console(WIDE)}\n")
