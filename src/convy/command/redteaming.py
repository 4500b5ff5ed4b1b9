"""`convy redteam`: attack scenarios written from the shipped catalogue for the agent's purpose
(no model asked), or with `--keep RUN` each attack of a run that succeeded written as a scripted
scenario; never over a file that is there (each one left is named)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

import convy
import convy.runs
from convy import ConfigurationError, Flags, Sources
from convy.command.console import Console
from convy.tools import Plural

EXIT_PASS = 0
PROJECT = ("project", "scenarios")
"""The settings `convy redteam --keep` takes as flags: where the project (its scenarios) is."""
ATTACKS = "scenarios/attacks"
KEPT = "scenarios/kept"


class Redteaming:
    """`convy redteam` asked for on the command line, with the command's `console` and `environ`."""

    def __init__(self, console: Console, environ: Mapping[str, str]) -> None:
        self._console = console
        self._environ = dict(environ)

    def exit_code(self, arguments: argparse.Namespace) -> int:
        if arguments.keep:
            return self.kept(arguments)
        if arguments.purpose is None:
            raise ConfigurationError(
                "--purpose", "is missing: say what the agent is for (or give --keep RUN to keep a run's wins)"
            )
        team = convy.runs.RedTeam(
            purpose=arguments.purpose,
            categories=tuple(arguments.categories.split(",")) if arguments.categories else (),
            per_category=arguments.per_category,
            seed=arguments.seed,
        )
        drafts = team.drafts()
        written = convy.runs.WrittenFiles.of(
            drafts, Path(arguments.to) if arguments.to else self.project(arguments).root / ATTACKS
        )
        self.said(written, "attack scenario")
        return EXIT_PASS

    def kept(self, arguments: argparse.Namespace) -> int:
        if arguments.purpose is not None or arguments.categories:
            raise ConfigurationError("--keep", "takes no --purpose or --categories: it keeps a run's wins")
        console = self._console
        project = self.project(arguments)
        run = console.stored(Path(arguments.keep), arguments.keep)
        keeping = convy.runs.KeptAttacks(run, project.every())
        for name in keeping.missing():
            console.err.write(
                f"convy: warning: the scenario `{name}` is no longer in the project: its wins are not kept\n"
            )
        drafts = keeping.drafts()
        if not drafts:
            console.out.write(f"convy: no attack succeeded in {arguments.keep}: nothing to keep\n")
            return EXIT_PASS
        target = Path(arguments.to) if arguments.to else project.root / KEPT
        self.said(convy.runs.WrittenFiles.of(drafts, target), "kept attack")
        return EXIT_PASS

    def project(self, arguments: argparse.Namespace) -> convy.Project:
        """The project the flags and the environment name (its folder holds the default targets)."""
        sources = Sources(Flags(PROJECT).given(arguments), self._environ, Path.cwd())
        return convy.Project(sources.settings(), sources, self._environ)

    def said(self, written: convy.runs.WrittenFiles, noun: str) -> None:
        out = self._console.out
        for path in written.wrote:
            out.write(f"convy: wrote {self.shown(path)}\n")
        for path in written.left:
            out.write(f"convy: left {self.shown(path)} as it is (it exists: redteam never overwrites)\n")
        out.write(
            f"convy: {Plural(len(written.wrote), noun).text()} written, "
            f"{Plural(len(written.left), 'file').text()} left as they were\n"
        )

    def shown(self, path: Path) -> str:
        """A path as printed: relative to the current folder when it is under it."""
        try:
            return str(path.resolve().relative_to(Path.cwd().resolve()))
        except ValueError:
            return str(path)
