"""The convy command: init, run, resume, report, compare, export, merge, estimate — the only place
that prints and picks exit codes."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from convy.draw.untrusted import Untrusted
from convy.errors import ConfigurationError
from convy.project.names import ENGINE
from convy.project.settings import Flags, Settings, Sources
from convy.words import Plural

if TYPE_CHECKING:
    from convy.compare.summary import Summary
    from convy.run.stop import Stop
    from convy.store.journal import Damage
    from convy.store.runs import StoredRun

EXIT_PASS, EXIT_CONFIG, EXIT_INTERRUPTED = 0, 2, 130
GATE = ("min-pass-rate", "max-drop", "alpha", "max-no-verdict", "max-failed")
REVIEW = (*GATE, "trace-url")
"""The settings `convy compare` and `convy merge` take as flags."""


class Command:
    """One invocation of `convy`: its arguments, environment and streams."""

    def __init__(self, argv: Sequence[str], environ: dict[str, str], out: TextIO, err: TextIO) -> None:
        self._argv = argv
        self._environ = environ
        self._out = out
        self._err = err
        self._warned: set[str] = set()
        """The damage warnings printed already: a folder read twice (resumed, then reviewed) warns once."""

    def parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(
            prog="convy", description="Play conversation scenarios against a chat agent and judge them."
        )
        commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
        init = commands.add_parser("init", help="write a starter project (never overwrites)")
        init.add_argument("folder", nargs="?", default=".", help="where to write it (default: here)")
        run = commands.add_parser("run", help="play the project's scenarios into a new run folder")
        run.add_argument(
            "--demo", action="store_true", help="play the bundled example against a built-in demo agent"
        )
        Flags(ENGINE).add_to(run)
        run.add_argument(
            "--baseline", default="", metavar="RUN", help="a run folder to compare with and gate against"
        )
        resume = commands.add_parser("resume", help="play the attempts a run folder is missing")
        resume.add_argument("run_folder", metavar="RUN", help="the run folder to finish")
        resume.add_argument("--demo", action="store_true", help="the run was a demo run")
        Flags(ENGINE).add_to(resume)
        report = commands.add_parser("report", help="write report.html for runs, and results/index.html")
        report.add_argument(
            "runs", nargs="*", metavar="RUN", help="run folders (default: every run under results/)"
        )
        Flags(("project", "results", "trace-url")).add_to(report)
        compare = commands.add_parser("compare", help="compare a run with a baseline run and gate it")
        compare.add_argument("run_folder", metavar="RUN")
        compare.add_argument("baseline", metavar="BASELINE")
        Flags(REVIEW).add_to(compare)
        merge = commands.add_parser(
            "merge", help="merge the runs of a run's shards (`--shard k/n`) into one run folder, and gate it"
        )
        merge.add_argument("runs", nargs="+", metavar="RUN", help="the shards' run folders, every one")
        merge.add_argument("--to", required=True, metavar="FOLDER", help="the merged run folder (new)")
        merge.add_argument(
            "--baseline", default="", metavar="RUN", help="a run folder to compare with and gate against"
        )
        Flags(REVIEW).add_to(merge)
        estimate = commands.add_parser(
            "estimate", help="the run's expected model calls, tokens and cost, from a baseline; no request"
        )
        Flags(ENGINE).add_to(estimate)
        estimate.add_argument("--baseline", default="", metavar="RUN", help="a run folder of the project")
        export = commands.add_parser(
            "export", help="write a run's tables as CSV and JSON Lines, or send it to OpenTelemetry"
        )
        export.add_argument("run_folder", metavar="RUN")
        export.add_argument("--to", default="", metavar="FOLDER", help="where (default: RUN/export)")
        export.add_argument(
            "--otlp", default="", metavar="URL", help="send its traces to this OTLP/HTTP receiver instead"
        )
        export.add_argument(
            "--header", action="append", default=[], metavar="'NAME: VALUE'", help="a header --otlp sends"
        )
        return parser

    def exit_code(self) -> int:
        arguments = self.parser().parse_args(self._argv)
        try:
            match arguments.command:
                case "init":
                    return self.init(Path(arguments.folder))
                case "run" | "resume":
                    return self.run(arguments)
                case "report":
                    return self.report(arguments)
                case "compare":
                    return self.compare(arguments)
                case "export":
                    return self.export(arguments)
                case "merge":
                    return self.merge(arguments)
                case "estimate":
                    return self.estimate(arguments)
        except ConfigurationError as error:
            self._err.write(f"convy: configuration error: {Untrusted(text=str(error)).logged()}\n")
            return EXIT_CONFIG
        return EXIT_CONFIG

    def init(self, folder: Path) -> int:
        template = Path(__file__).parent / "template"
        files = [p for p in sorted(template.rglob("*")) if p.is_file() and "__pycache__" not in p.parts]
        ignored = folder / ".gitignore"
        for path in files:
            target = folder / path.relative_to(template)
            if target.exists() and target != ignored:
                raise ConfigurationError(str(target), "exists already: convy init never overwrites")
        branch = DefaultBranch(folder).name()
        for path in files:
            target = folder / path.relative_to(template)
            target.parent.mkdir(parents=True, exist_ok=True)
            if target == ignored and target.exists():
                kept = target.read_text(encoding="utf-8")
                if "results/" not in kept.split():
                    target.write_text(kept.rstrip("\n") + "\nresults/\n", encoding="utf-8")
                    self._out.write(f"added results/ to {target}\n")
                continue
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".yml" and branch != "main":
                text = text.replace("branches: [main]", f"branches: [{branch}]")
            target.write_text(text, encoding="utf-8")
            self._out.write(f"wrote {target}\n")
        self._out.write(
            "\nNext: point agents/example.yaml at your agent, then\n"
            "  convy run --model-key $OPENAI_API_KEY --user-model gpt-4o-mini\n"
            "For CI (.github/workflows/convy.yml), give the repository the secrets OPENAI_API_KEY and\n"
            "AGENT_TOKEN and the variable AGENT_URL (Settings → Secrets and variables → Actions).\n"
        )
        return EXIT_PASS

    def run(self, arguments: argparse.Namespace) -> int:
        flags = Flags(ENGINE).given(arguments)
        with contextlib.ExitStack() as stack:
            environ = dict(self._environ)
            if arguments.demo:
                from convy.demo.servers import DemoServers

                demo = stack.enter_context(DemoServers())
                environ.update(demo.environ())
                results = Path.cwd() / str(flags.get("results", "results"))
                flags = {**demo.flags(), **flags, "results": str(results)}
                flags["project"] = str(demo.project)
            return self.played(arguments, flags, environ)
        return EXIT_CONFIG

    def played(self, arguments: argparse.Namespace, flags: dict[str, object], environ: dict[str, str]) -> int:
        import asyncio

        from convy.compare.comparison import NO_BASELINE, NoBaseline
        from convy.draw.progress import Printed
        from convy.run.assembly import Project
        from convy.run.prefetch import Ahead, Prefetch
        from convy.run.run import Run
        from convy.run.session import Session
        from convy.run.stages import Staging
        from convy.store.journal import Provenance, RunInUse, RunJournal

        resume = Path(arguments.run_folder) if arguments.command == "resume" else None
        if resume is not None and "agent-url" not in flags and (resume / "run.json").exists():
            with contextlib.suppress(Exception):
                flags.setdefault("agent", RunJournal(resume).header().spec.agent)
        sources = Sources(flags, environ, Path.cwd())
        project = Project(sources.settings(), sources, environ)
        with Slow(self._err, "convy: still reading the project (its scenario files, its agent)…"):
            prepared = Session(project=project, resume=resume).prepared()
        if resume is not None:
            try:
                self.damaged(resume, RunJournal(resume).damage())
            except ValueError as error:
                raise ConfigurationError(str(resume), str(error)) from None
        baseline = getattr(arguments, "baseline", "")
        before: StoredRun | NoBaseline = NO_BASELINE
        if baseline:
            before = self.stored(Path(baseline), str(baseline))
        shown: list[Printed] = []
        stops: list[Stop] = []

        def watch(run: Run, missing: int) -> Ahead:
            # while stages may add attempts, the progress line says how many at most
            most = Staging(run.spec).left(run.journal.outcomes()) if run.staged(before) else 0
            if shown:
                self._out.write(
                    f"convy: {Plural(missing, 'more attempt').text()} where the comparison is unclear\n"
                )
                shown[0].more(missing, most)
                return Ahead(shown[0], Prefetch())
            self._out.write(
                f"convy: {Plural(missing, 'attempt').text()} of {len(run.spec.expected())} to play "
                f"against {Untrusted(text=run.spec.agent).console(200)!r} → {run.journal.folder}\n"
            )
            shown.append(Printed(missing, self._out, self._out.isatty(), most))
            return Ahead(shown[0], Prefetch())

        async def play() -> Run:
            with self.terminable(stops):
                ticker = asyncio.get_running_loop().create_task(ticking())
                try:
                    return await prepared.play(Provenance(), watch, before)
                finally:
                    ticker.cancel()

        async def ticking() -> None:
            while not shown:
                await asyncio.sleep(0.05)
            await shown[0].ticking()

        try:
            run = asyncio.run(play())
        except RunInUse as error:
            raise ConfigurationError("run", str(error)) from None
        except (KeyboardInterrupt, asyncio.CancelledError):
            self._err.write(
                "\nconvy: interrupted; the run folder is kept: finish it with "
                f"`convy resume {prepared.folder}`\n"
            )
            return stops[0].exit_code if stops else EXIT_INTERRUPTED
        return self.reviewed(run.journal.folder, Path(baseline) if baseline else None, project.settings)

    def stored(self, folder: Path, what: str) -> StoredRun:
        """A run folder read back, or a configuration error naming it."""
        from convy.store.journal import NewerFormat
        from convy.store.runs import Runs

        try:
            run = Runs(folder.parent).one(folder)
        except (NewerFormat, ValueError) as error:
            raise ConfigurationError(what, str(error)) from None
        try:
            damage = run.damage()
        except ValueError as error:
            raise ConfigurationError(what, str(error)) from None
        self.damaged(folder, damage)
        return run

    def damaged(self, folder: Path, damage: Sequence[Damage]) -> None:
        """A warning for each attempt line not counted (the first ten, then how many more), each
        printed once however often the folder is read."""
        lines = [f"{folder}: {Untrusted(text=one.text()).console(300)}" for one in damage[:10]]
        if len(damage) > 10:
            lines.append(f"{folder}: {len(damage) - 10} more attempt lines skipped")
        for line in lines:
            if line not in self._warned:
                self._warned.add(line)
                self._err.write(f"convy: warning: {line}\n")

    def summed(self, folder: Path) -> tuple[StoredRun, Summary]:
        """A run named on the command line, read back and summed up."""
        from convy.compare.summary import Summed

        run = self.stored(folder, str(folder))
        return run, Summed.of(run).summary()

    def reviewed(self, folder: Path, baseline: Path | None, settings: Settings) -> int:
        """Compare a run with its baseline (or the floor only), write its files, print, gate."""
        from convy.compare.comparison import NoBaseline, RunsDiffer
        from convy.run.review import Review

        before: StoredRun | NoBaseline = NoBaseline(why="no baseline given")
        if baseline is not None:
            before = self.stored(baseline, str(baseline))
        try:
            reviewed = Review.gated(self.stored(folder, str(folder)), before, settings).reviewed()
        except RunsDiffer as error:
            raise ConfigurationError(str(baseline), str(error)) from None
        written = reviewed.written()
        self._out.write(reviewed.console() + "\n")
        for path in written:
            self._out.write(f"convy: wrote {path}\n")
        return reviewed.decision.exit_code

    def compare(self, arguments: argparse.Namespace) -> int:
        sources = Sources(Flags(REVIEW).given(arguments), self._environ, Path.cwd())
        return self.reviewed(Path(arguments.run_folder), Path(arguments.baseline), sources.settings())

    def report(self, arguments: argparse.Namespace) -> int:
        from convy.compare.summary import Summed
        from convy.draw.links import TraceLink
        from convy.draw.report import Index, Report
        from convy.project.traceurl import TraceUrl
        from convy.store.atomic import AtomicFile
        from convy.store.runs import Runs

        sources = Sources(
            Flags(("project", "results", "trace-url")).given(arguments), self._environ, Path.cwd()
        )
        settings = sources.settings()
        trace = TraceLink(TraceUrl(settings.trace_url).checked())
        results = (Path.cwd() / settings.project / settings.results).resolve()
        every = Runs(results)
        broken = every.broken()
        for unread in broken:
            self._err.write(f"convy: cannot read {unread.folder}: {unread.reason}\n")
        unreadable = {Path(b.folder) for b in broken}
        read = {
            run.folder: (run, Summed.of(run).summary())
            for run in every.readable()
            if run.folder not in unreadable
        }
        chosen = [Path(f).resolve() for f in arguments.runs] or list(read)
        for folder in chosen:
            run, summary = read.get(folder) or self.summed(folder)
            self.damaged(folder, run.damage())
            AtomicFile(folder / "report.html").write_text(Report(summary, run.outcomes(), None, trace).html())
            self._out.write(f"convy: wrote {folder / 'report.html'}\n")
        if results.is_dir():
            index = results / "index.html"
            AtomicFile(index).write_text(Index(tuple(summary for _, summary in read.values())).html())
            self._out.write(f"convy: wrote {index}\n")
        return EXIT_PASS

    def merge(self, arguments: argparse.Namespace) -> int:
        from convy.store.merged import Shards

        sources = Sources(Flags(REVIEW).given(arguments), self._environ, Path.cwd())
        settings = sources.settings()
        folders = [Path(folder) for folder in arguments.runs]
        runs = tuple(self.stored(folder, str(folder)) for folder in folders)
        target = Path(arguments.to)
        merged = Shards(runs, tuple(str(folder) for folder in folders)).merged(target)
        self._out.write(f"convy: merged {len(runs)} shards into {target} ({merged.file.status})\n")
        return self.reviewed(target, Path(arguments.baseline) if arguments.baseline else None, settings)

    def estimate(self, arguments: argparse.Namespace) -> int:
        from convy.compare.comparison import NoBaseline
        from convy.run.assembly import Project
        from convy.run.estimate import Estimating

        sources = Sources(Flags(ENGINE).given(arguments), self._environ, Path.cwd())
        project = Project(sources.settings(), sources, self._environ)
        baseline = arguments.baseline
        before = self.stored(Path(baseline), baseline) if baseline else NoBaseline(why="no baseline given")
        self._out.write("\n".join(Estimating(project, before).estimate().lines()) + "\n")
        return EXIT_PASS

    def export(self, arguments: argparse.Namespace) -> int:
        from convy.compare.summary import Summed
        from convy.draw.tables import Tables

        folder = Path(arguments.run_folder)
        if arguments.otlp:
            return self.sent(folder, arguments.otlp, tuple(arguments.header))
        run = self.stored(folder, str(folder))
        target = Path(arguments.to) if arguments.to else folder / "export"
        target.mkdir(parents=True, exist_ok=True)
        Tables(run, Summed.of(run).summary()).write(target)
        self._out.write(f"convy: wrote the tables of {folder} to {target}\n")
        return EXIT_PASS

    def sent(self, folder: Path, url: str, headers: tuple[str, ...]) -> int:
        """A run sent to an OpenTelemetry receiver: exit 1 with its words when it refuses."""
        from convy.store.otlp import Collector, Refused
        from convy.store.traces import RunTraces

        collector = Collector.given(url, headers, ("--otlp", "--header"))
        run = self.stored(folder, str(folder))
        try:
            sent = collector.send(RunTraces(run).attempts())
        except Refused as error:
            self._err.write(f"convy: the run was not sent: {Untrusted(text=str(error)).console(400)}\n")
            return 1
        shown = Untrusted(text=collector.endpoint.shown()).console(200)
        traces = Plural(sent.traces, "trace").text()
        self._out.write(f"convy: sent {traces} ({sent.spans} spans) to {shown}\n")
        return EXIT_PASS

    @contextlib.contextmanager
    def terminable(self, stops: list[Stop]) -> Iterator[None]:
        """SIGTERM and Ctrl+C cancel the run, so the folder is marked interrupted (Stop, appended
        to `stops` so the exit code can name the signal)."""
        import asyncio

        from convy.run.stop import Stop  # noqa: F811 (loaded when a run is played)

        task = asyncio.current_task()
        if task is None:
            yield
            return
        stop = Stop(task)
        stops.append(stop)
        with stop.installed():
            yield


def main(argv: Sequence[str] | None = None) -> int:
    """The command's entry point."""
    if importlib.util.find_spec("sniffio") is None:
        # httpcore imports sniffio at every request; absent, let that import fail at once (decision 12)
        sys.modules.setdefault("sniffio", None)  # type: ignore[arg-type]
    # httpx's own command line (httpx._main) is never used here, but importing httpx loads click,
    # pygments and rich for it wherever they are installed: tens of milliseconds (decision 12)
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8", errors="replace")
    command = Command(sys.argv[1:] if argv is None else argv, dict(os.environ), sys.stdout, sys.stderr)
    return command.exit_code()


class DefaultBranch:
    """The default branch of the git repository a folder is in, for the workflow `convy init`
    writes (its pushes build the baselines): origin's HEAD, else git's init.defaultBranch, else
    `main`."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder

    def name(self) -> str:
        import subprocess

        for command in (
            ["git", "symbolic-ref", "--short", "refs/remotes/origin/HEAD"],
            ["git", "config", "--get", "init.defaultBranch"],
        ):
            try:
                done = subprocess.run(
                    command, cwd=self._folder, capture_output=True, text=True, timeout=10, check=False
                )
            except (OSError, subprocess.SubprocessError):
                return "main"
            found = done.stdout.strip().removeprefix("origin/")
            if done.returncode == 0 and found and all(c.isalnum() or c in "-_./" for c in found):
                return found
        return "main"


class Slow:
    """A line on `stream` when the block it wraps takes longer than `after` seconds (reading tens of
    thousands of scenario files), so a long silence is never mistaken for a hang."""

    def __init__(self, stream: TextIO, line: str, after: float = 3.0) -> None:
        self._stream = stream
        self._line = line
        self._after = after
        self._timer: threading.Timer | None = None

    def __enter__(self) -> Slow:
        self._timer = threading.Timer(self._after, self.say)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def say(self) -> None:
        self._stream.write(self._line + "\n")
        self._stream.flush()
