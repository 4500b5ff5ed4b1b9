"""The convy command: init, run, resume, report, compare, export, merge, estimate, calibrate, label,
draft, redteam — the only place that prints and picks exit codes. It uses the engine through its public
names, as any program built on it would; what each subcommand does is in convy.command."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from convy import SETTING_NAMES, ConfigurationError, Flags, Sources
from convy.command.calibrating import JUDGE as CALIBRATE
from convy.command.console import Console
from convy.command.drafting import MODEL as DRAFT
from convy.command.labelling import PROJECT as LABEL
from convy.command.reading import PAGES, REVIEW
from convy.command.redteaming import PROJECT as REDTEAM
from convy.tools import CommandLine, ExitCodes, Startup, Subcommand, Untrusted

EXIT_PASS, EXIT_CONFIG = 0, 2
EXIT_CLOSED = 141
"""The output was closed before the command was done: 128 + SIGPIPE, as a shell reports it."""
RUN_EXITS = (0, 1, 2, 3, 130, 141, 143)
"""`convy run` and `convy resume`: the gate's codes, or interrupted."""
GATE_EXITS = (0, 1, 2, 3)
"""`convy compare` and `convy merge`: the gate's codes."""
WRITE_EXITS = (0, 2)
"""The subcommands that write or print and gate nothing."""


class Command:
    """One invocation of `convy`: its arguments, environment and streams."""

    def __init__(self, argv: Sequence[str], environ: dict[str, str], out: TextIO, err: TextIO) -> None:
        self._argv = argv
        self._named = argv[0] if argv and not argv[0].startswith("-") else ""
        self._environ = environ
        self._console = Console(out, err)

    def parser(self) -> argparse.ArgumentParser:
        parser = CommandLine(
            prog="convy",
            description="Play conversation scenarios against a chat agent and judge them.",
            epilog=f"{ExitCodes(RUN_EXITS).text()}. Each command's --help says what it does and its exits.",
            allow_abbrev=False,
        )
        commands = parser.add_subparsers(
            dest="command", required=True, metavar="COMMAND", parser_class=Subcommand
        )

        def command(name: str, summary: str, description: str, exits: tuple[int, ...]) -> Subcommand:
            made = commands.add_parser(
                name,
                help=summary,
                description=description,
                epilog=ExitCodes(exits).text() + ".",
                allow_abbrev=False,
            )
            return made

        init = command(
            "init",
            "write a starter project (never overwrites)",
            "Write a starter project into FOLDER: a scenario, an agent file and a workflow; a file that "
            "is there already is left as it is.",
            WRITE_EXITS,
        )
        init.add_argument("folder", nargs="?", default=".", help="where to write it (default: here)")
        run = command(
            "run",
            "play the project's scenarios into a new run folder",
            "Play the project's scenarios against its agent into a new run folder under results/, judge "
            "every attempt, compare the run with --baseline when one is given, write comment.md and the "
            "pages, and gate.",
            RUN_EXITS,
        )
        run.add_argument(
            "--demo", action="store_true", help="play the bundled example against a built-in demo agent"
        )
        self.settings(SETTING_NAMES, run, "run")
        run.add_argument(
            "--baseline", default="", metavar="RUN", help="a run folder to compare with and gate against"
        )
        resume = command(
            "resume",
            "play the attempts a run folder is missing",
            "Play the attempts an interrupted run folder is missing, with the settings it was started "
            "with, then review and gate it as `convy run` does.",
            RUN_EXITS,
        )
        resume.add_argument("run_folder", metavar="RUN", help="the run folder to finish")
        resume.add_argument("--demo", action="store_true", help="the run was a demo run")
        self.settings(SETTING_NAMES, resume, "resume")
        report = command(
            "report",
            "write report.html for runs, and results/index.html",
            "Write each run folder's report.html again, and results/index.html listing every run.",
            WRITE_EXITS,
        )
        report.add_argument(
            "runs", nargs="*", metavar="RUN", help="run folders (default: every run under results/)"
        )
        self.settings(PAGES, report, "report")
        compare = command(
            "compare",
            "compare a run with a baseline run and gate it",
            "Compare a run folder with a baseline run folder of the same agent, write the run's "
            "comment.md and pages (and --junit), print the comparison, and gate.",
            GATE_EXITS,
        )
        compare.add_argument("run_folder", metavar="RUN", help="the run folder to gate")
        compare.add_argument("baseline", metavar="BASELINE", help="the run folder to compare it with")
        self.settings(REVIEW, compare, "compare")
        merge = command(
            "merge",
            "merge the runs of a run's shards (`--shard k/n`) into one run folder, and gate it",
            "Merge the run folders of a run's shards (played with --shard k/n) into one new run folder, "
            "then review and gate it as `convy compare` does (against --baseline, or the floor only).",
            GATE_EXITS,
        )
        merge.add_argument("runs", nargs="+", metavar="RUN", help="the shards' run folders, every one")
        merge.add_argument("--to", required=True, metavar="FOLDER", help="the merged run folder (new)")
        merge.add_argument(
            "--baseline", default="", metavar="RUN", help="a run folder to compare with and gate against"
        )
        self.settings(REVIEW, merge, "merge")
        estimate = command(
            "estimate",
            "the run's expected model calls, tokens and cost, from a baseline; no request",
            "Estimate what `convy run` would spend, from the project's scenarios and a baseline run's "
            "figures: attempts, model calls, tokens and cost. It sends no request.",
            WRITE_EXITS,
        )
        self.settings(SETTING_NAMES, estimate, "estimate")
        estimate.add_argument("--baseline", default="", metavar="RUN", help="a run folder of the project")
        export = command(
            "export",
            "write a run's tables as CSV and JSON Lines, or send it to OpenTelemetry",
            "Write a run folder's tables (attempts, turns, claims) as CSV and JSON Lines, or send its "
            "traces to an OpenTelemetry receiver with --otlp (exit 1 when the receiver refuses them).",
            (0, 1, 2),
        )
        export.add_argument("run_folder", metavar="RUN", help="the run folder to export")
        export.add_argument("--to", default="", metavar="FOLDER", help="where (default: RUN/export)")
        export.add_argument(
            "--otlp", default="", metavar="URL", help="send its traces to this OTLP/HTTP receiver instead"
        )
        export.add_argument(
            "--header", action="append", default=[], metavar="'NAME: VALUE'", help="a header --otlp sends"
        )
        calibrate = command(
            "calibrate",
            "measure the judge against the project's labels (labels/*.yaml): agreement, κ, false passes",
            "Today's judge decides every labelled transcript's claims (judge calls only; a decision of an "
            "earlier calibration with the same judge, transcript and claims is reused), set against the "
            "person's decisions: per claim and overall, the agreement, Cohen's κ with a 95% bootstrap "
            "interval, false passes and false fails, and every disagreement. Written to "
            "results/calibration/<id>/.",
            WRITE_EXITS,
        )
        calibrate.add_argument(
            "--labels", default="", metavar="DIR", help="the labels folder (default: the project's labels/)"
        )
        calibrate.add_argument(
            "--demo", action="store_true", help="calibrate the demo's scripted judge on the demo's labels"
        )
        self.settings(CALIBRATE, calibrate, "calibrate")
        redteam = command(
            "redteam",
            "write attack scenarios from the red-team catalogue, or keep a run's successful attacks",
            "Write attack scenarios from the catalogue shipped with convy (prompt-injection, "
            "sensitive-disclosure, excessive-agency, system-prompt-leak, misinformation, off-topic) for "
            "an agent whose purpose is --purpose: the same files for the same --seed, no model asked. "
            "With --keep RUN, write each attempt of RUN whose attack succeeded as a scripted scenario "
            "(the attacker's messages as its turns) that replays with no user model. A file that is "
            "there already is left as it is.",
            WRITE_EXITS,
        )
        redteam.add_argument("--purpose", default=None, metavar="TEXT", help="what the agent is for")
        redteam.add_argument(
            "--categories", default="", metavar="A,B", help="the catalogue's categories (default: all)"
        )
        redteam.add_argument(
            "--per-category", type=int, default=3, metavar="N", help="scenarios per category (default 3)"
        )
        redteam.add_argument("--seed", type=int, default=0, metavar="S", help="the draw's seed (default 0)")
        redteam.add_argument(
            "--to",
            default="",
            metavar="DIR",
            help="where to write (default: scenarios/attacks, or scenarios/kept with --keep)",
        )
        redteam.add_argument(
            "--keep", default="", metavar="RUN", help="a run folder whose successful attacks to keep"
        )
        self.settings(REDTEAM, redteam, "redteam")
        label = command(
            "label",
            "label a run's judged attempts by hand in a terminal, blind to the judge, into labels/",
            "Ask a person, one judged attempt of RUN at a time, the transcript and then each claim: y "
            "(holds), n (does not), a grade's name or number, s (skip the rest of this attempt), q "
            "(quit). The judge's decision and reason are shown only after the answer. Attempts are drawn "
            "at random, seeded by the run id; each answer is written to the labels file as it is given.",
            (0, 2, 130),
        )
        label.add_argument("run", metavar="RUN", help="a run folder or its artifact zip")
        label.add_argument(
            "--count", type=int, default=20, metavar="N", help="how many attempts (default 20)"
        )
        label.add_argument(
            "--failing",
            action="store_true",
            help="attempts with a failing claim first (marked chosen: failing)",
        )
        label.add_argument(
            "--to", default="", metavar="FILE", help="the labels file (default: labels/<run id>.yaml)"
        )
        self.settings(LABEL, label, "label")
        draft = command(
            "draft",
            "write scenarios from recorded conversations (traces, logs, chat logs, run folders)",
            "Write one scenario file per recorded conversation into --to: its user's messages as turns (a "
            "replay), `source`, `tags: [drafted]` and the claims (--claim, or drafted by a model with "
            "--brief). SOURCE is an OTLP JSON trace or log file, a chat log (JSON Lines of "
            '{"messages": [...]}) or a run folder. Personal data is masked unless --keep-pii; a file '
            "that is there already is left as it is.",
            WRITE_EXITS,
        )
        draft.add_argument("sources", nargs="*", metavar="SOURCE", help="files and run folders to draft from")
        draft.add_argument(
            "--to", default="scenarios/drafted", metavar="DIR", help="where (default: scenarios/drafted)"
        )
        draft.add_argument(
            "--claim", action="append", default=[], metavar="TEXT", help="a claim every scenario gets"
        )
        draft.add_argument(
            "--brief", action="store_true", help="a model drafts each scenario's brief and claims, to review"
        )
        draft.add_argument(
            "--where",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="keep conversations with this span attribute or chat-log metadata (e.g. feedback=negative)",
        )
        draft.add_argument(
            "--limit", type=int, default=0, metavar="N", help="keep the N latest conversations"
        )
        draft.add_argument("--keep-pii", action="store_true", help="do not mask personal data")
        draft.add_argument(
            "--phoenix", default="", metavar="URL", help="read a project of Arize Phoenix at URL"
        )
        draft.add_argument(
            "--project",
            dest="project_name",
            default="",
            metavar="NAME",
            help="the Phoenix project (with --phoenix)",
        )
        self.settings(DRAFT, draft, "draft")
        return parser

    def settings(self, names: tuple[str, ...], parser: argparse.ArgumentParser, name: str) -> None:
        """The settings' options on the subcommand `name`: only on the one the command line names
        (making every subcommand's options costs milliseconds of each start), on all when it names
        none."""
        if self._named in ("", name):
            Flags(names).add_to(parser)

    def exit_code(self) -> int:
        arguments = self.parser().parse_args(self._argv)
        for stray in Sources({}, self._environ, Path.cwd()).strays():
            self._console.err.write(f"convy: warning: {stray}\n")
        try:
            return self.done(arguments)
        except ConfigurationError as error:
            self._console.err.write(f"convy: configuration error: {Untrusted(text=str(error)).logged()}\n")
            return EXIT_CONFIG

    def done(self, arguments: argparse.Namespace) -> int:
        """The subcommand done; its exit code."""
        from convy.command.reading import Reading

        reading = Reading(self._console, self._environ)
        match arguments.command:
            case "init":
                from convy.command.starter import Starter

                Starter(Path(__file__).parent / "template", self._console.out).written(Path(arguments.folder))
                return EXIT_PASS
            case "run" | "resume":
                from convy.command.playing import Playing

                return Playing(self._console, self._environ).exit_code(arguments)
            case "report":
                return reading.report(arguments)
            case "compare":
                return reading.compare(arguments)
            case "export":
                return reading.export(arguments)
            case "merge":
                return reading.merge(arguments)
            case "estimate":
                return reading.estimate(arguments)
            case "calibrate":
                from convy.command.calibrating import Calibrating

                return Calibrating(self._console, self._environ).exit_code(arguments)
            case "redteam":
                from convy.command.redteaming import Redteaming

                return Redteaming(self._console, self._environ).exit_code(arguments)
            case "label":
                from convy.command.labelling import Labelling

                return Labelling(self._console, self._environ).exit_code(arguments)
            case "draft":
                from convy.command.drafting import Drafting

                return Drafting(self._console, self._environ).exit_code(arguments)
        return EXIT_CONFIG


def main(argv: Sequence[str] | None = None) -> int:
    """The command's entry point."""
    Startup().prepared()
    command = Command(sys.argv[1:] if argv is None else argv, dict(os.environ), sys.stdout, sys.stderr)
    try:
        code = command.exit_code()
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader went away (`convy run | head`): quiet, and what is left to write goes nowhere
        # rather than failing again at exit; the code a shell gives a program SIGPIPE ended (decision 44)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_CLOSED
    return code


def process() -> int:
    """The `convy` process (`convy`, `python -m convy`): the command, then a quick exit."""
    code = main()
    Startup().ending()
    return code
