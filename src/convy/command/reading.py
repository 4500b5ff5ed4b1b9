"""The subcommands that read run folders back: `compare` (a run against a baseline, gated),
`report` (the pages), `merge` (a run's shards into one), `estimate` (a run's cost from a baseline)
and `export` (the tables, or the traces sent to an OpenTelemetry receiver)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

import convy
import convy.runs
import convy.tools
from convy import SETTING_NAMES, Flags, Sources
from convy.command.console import Console
from convy.tools import Plural, Untrusted

EXIT_PASS = 0
GATE = ("min-pass-rate", "max-drop", "alpha", "max-no-verdict", "max-failed", "min-judge-kappa", "min-labels")
REVIEW = (*GATE, "trace-url", "junit")
"""The settings `convy compare` and `convy merge` take as flags."""
PAGES = ("project", "results", "trace-url")
"""The settings `convy report` takes as flags."""


class Reading:
    """Run folders read back from the command line, with the command's `console` and `environ`."""

    def __init__(self, console: Console, environ: Mapping[str, str]) -> None:
        self._console = console
        self._environ = dict(environ)

    def sources(self, names: tuple[str, ...], arguments: argparse.Namespace) -> Sources:
        return Sources(Flags(names).given(arguments), self._environ, Path.cwd())

    def compare(self, arguments: argparse.Namespace) -> int:
        settings = self.sources(REVIEW, arguments).settings()
        return self._console.reviewed(Path(arguments.run_folder), Path(arguments.baseline), settings)

    def report(self, arguments: argparse.Namespace) -> int:
        console = self._console
        settings = self.sources(PAGES, arguments).settings()
        trace = convy.runs.TraceLink(convy.runs.TraceUrl(settings.trace_url).checked())
        results = (Path.cwd() / settings.project / settings.results).resolve()
        every = convy.runs.Runs(results)
        broken = every.broken()
        for unread in broken:
            console.err.write(f"convy: cannot read {unread.folder}: {unread.reason}\n")
        unreadable = {Path(b.folder) for b in broken}
        read = {
            run.folder: (run, convy.runs.Summed.of(run).summary())
            for run in every.readable()
            if run.folder not in unreadable
        }
        chosen = [Path(f).resolve() for f in arguments.runs] or list(read)
        for folder in chosen:
            run, summary = read.get(folder) or console.summed(folder)
            console.damaged(folder, run.damage())
            page = convy.runs.Report(summary, run.outcomes(), None, trace).html()
            convy.tools.AtomicFile(folder / "report.html").write_text(page)
            console.out.write(f"convy: wrote {folder / 'report.html'}\n")
        if results.is_dir():
            index = results / "index.html"
            convy.tools.AtomicFile(index).write_text(
                convy.runs.Index(tuple(summary for _, summary in read.values())).html()
            )
            console.out.write(f"convy: wrote {index}\n")
        return EXIT_PASS

    def merge(self, arguments: argparse.Namespace) -> int:
        console = self._console
        settings = self.sources(REVIEW, arguments).settings()
        folders = [Path(folder) for folder in arguments.runs]
        runs = tuple(console.stored(folder, str(folder)) for folder in folders)
        target = Path(arguments.to)
        merged = convy.runs.Shards(runs, tuple(str(folder) for folder in folders)).merged(target)
        console.out.write(f"convy: merged {len(runs)} shards into {target} ({merged.file.status})\n")
        return console.reviewed(target, Path(arguments.baseline) if arguments.baseline else None, settings)

    def estimate(self, arguments: argparse.Namespace) -> int:
        console = self._console
        flags = Flags(SETTING_NAMES).given(arguments)
        with convy.Plan(folder=Path.cwd(), flags=flags, environ=self._environ).opened() as opened:
            estimate = opened.estimate(console.baseline(str(arguments.baseline or "")))
        console.out.write("\n".join(estimate.lines()) + "\n")
        return EXIT_PASS

    def export(self, arguments: argparse.Namespace) -> int:
        console = self._console
        folder = Path(arguments.run_folder)
        if arguments.otlp:
            return self.sent(folder, arguments.otlp, tuple(arguments.header))
        run = console.stored(folder, str(folder))
        target = Path(arguments.to) if arguments.to else folder / "export"
        target.mkdir(parents=True, exist_ok=True)
        convy.runs.Tables(run, convy.runs.Summed.of(run).summary()).write(target)
        console.out.write(f"convy: wrote the tables of {folder} to {target}\n")
        return EXIT_PASS

    def sent(self, folder: Path, url: str, headers: tuple[str, ...]) -> int:
        """A run sent to an OpenTelemetry receiver: exit 1 with its words when it refuses."""
        console = self._console
        collector = convy.runs.Collector.given(url, headers, ("--otlp", "--header"))
        run = console.stored(folder, str(folder))
        try:
            sent = collector.send(convy.runs.RunTraces(run).attempts())
        except convy.runs.ReceiverRefused as error:
            console.err.write(f"convy: the run was not sent: {Untrusted(text=str(error)).console(400)}\n")
            return 1
        shown = Untrusted(text=collector.endpoint.shown()).console(200)
        traces = Plural(sent.traces, "trace").text()
        console.out.write(f"convy: sent {traces} ({sent.spans} spans) to {shown}\n")
        return EXIT_PASS
