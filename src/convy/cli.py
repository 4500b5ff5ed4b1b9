"""The convy command: init, run, resume — the only place that prints and picks exit codes."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from convy.errors import ConfigurationError
from convy.settings import ENGINE, Flags, Sources

EXIT_PASS, EXIT_FAIL, EXIT_CONFIG, EXIT_INCONCLUSIVE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class Command:
    """One invocation of `convy`: its arguments, environment and streams."""

    def __init__(self, argv: Sequence[str], environ: dict[str, str], out: TextIO, err: TextIO) -> None:
        self._argv = argv
        self._environ = environ
        self._out = out
        self._err = err

    def parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(
            prog="convy", description="Play conversation scenarios against a chat agent and judge them."
        )
        commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
        init = commands.add_parser("init", help="write a starter project (never overwrites)")
        init.add_argument("folder", nargs="?", default=".", help="where to write it (default: here)")
        run = commands.add_parser("run", help="play the project's scenarios into a new run folder")
        run.add_argument("--demo", action="store_true", help="play the bundled example against a built-in demo agent")
        Flags(ENGINE).add_to(run)
        resume = commands.add_parser("resume", help="play the attempts a run folder is missing")
        resume.add_argument("run_folder", metavar="RUN", help="the run folder to finish")
        resume.add_argument("--demo", action="store_true", help="the run was a demo run")
        Flags(ENGINE).add_to(resume)
        return parser

    def exit_code(self) -> int:
        arguments = self.parser().parse_args(self._argv)
        try:
            match arguments.command:
                case "init":
                    return self.init(Path(arguments.folder))
                case "run" | "resume":
                    return self.run(arguments)
        except ConfigurationError as error:
            self._err.write(f"convy: configuration error: {error}\n")
            return EXIT_CONFIG
        return EXIT_CONFIG

    def init(self, folder: Path) -> int:
        template = Path(__file__).parent / "template"
        files = [p for p in sorted(template.rglob("*")) if p.is_file() and "__pycache__" not in p.parts]
        for path in files:
            target = folder / path.relative_to(template)
            if target.exists():
                raise ConfigurationError(str(target), "exists already: convy init never overwrites")
        for path in files:
            target = folder / path.relative_to(template)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            self._out.write(f"wrote {target}\n")
        self._out.write(
            "\nNext: point agents/example.yaml at your agent, then\n"
            "  convy run --model-key $OPENAI_API_KEY --user-model gpt-4o-mini\n"
        )
        return EXIT_PASS

    def run(self, arguments: argparse.Namespace) -> int:
        from convy.demo.servers import DemoServers

        flags = Flags(ENGINE).given(arguments)
        with contextlib.ExitStack() as stack:
            environ = dict(self._environ)
            if arguments.demo:
                demo = stack.enter_context(DemoServers())
                environ.update(demo.environ())
                results = Path.cwd() / str(flags.get("results", "results"))
                flags = {**demo.flags(), **flags, "results": str(results)}
                flags["project"] = str(demo.project)
            return self.played(arguments, flags, environ)
        return EXIT_CONFIG

    def played(self, arguments: argparse.Namespace, flags: dict[str, object], environ: dict[str, str]) -> int:
        from convy.journal import Provenance, RunInUse, RunJournal
        from convy.progress import Printed
        from convy.project import Project
        from convy.run import Run
        from convy.session import Session

        resume = Path(arguments.run_folder) if arguments.command == "resume" else None
        if resume is not None and "agent-url" not in flags and (resume / "run.json").exists():
            with contextlib.suppress(Exception):
                flags.setdefault("agent", RunJournal(resume).header().spec.agent)
        sources = Sources(flags, environ, Path.cwd())
        project = Project(sources.settings(), sources, environ)
        prepared = Session(project=project, resume=resume).prepared()
        if resume is not None and RunJournal(resume).torn():
            self._err.write("convy: warning: the last line of attempts.jsonl was torn; it is skipped\n")
        shown: list[Printed] = []

        def watch(run: Run) -> Printed:
            missing = run.missing()
            self._out.write(
                f"convy: {len(missing)} attempts of {len(run.spec.expected())} to play "
                f"against {run.spec.agent!r} → {run.journal.folder}\n"
            )
            shown.append(Printed(len(missing), self._out, self._out.isatty()))
            return shown[0]

        async def play() -> Run:
            with self.terminable():
                return await prepared.play(Provenance(), watch)

        try:
            run = asyncio.run(play())
        except RunInUse as error:
            raise ConfigurationError("run", str(error)) from None
        except (KeyboardInterrupt, asyncio.CancelledError):
            self._err.write("\nconvy: interrupted; the run folder is kept: finish it with `convy resume RUN`\n")
            return EXIT_INTERRUPTED
        printed = shown[0]
        self._out.write(
            f"convy: finished: {printed.held} held, {printed.failed} not held, "
            f"{printed.unjudged} without verdict\n"
            f"convy: run folder: {run.journal.folder}\n"
        )
        return EXIT_PASS

    @contextlib.contextmanager
    def terminable(self) -> Iterator[None]:
        """SIGTERM cancels the run like Ctrl+C does, so the folder is marked interrupted."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        if task is None:
            yield
            return
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
        try:
            yield
        finally:
            loop.remove_signal_handler(signal.SIGTERM)


def main(argv: Sequence[str] | None = None) -> int:
    """The command's entry point."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8", errors="replace")
    command = Command(sys.argv[1:] if argv is None else argv, dict(os.environ), sys.stdout, sys.stderr)
    return command.exit_code()

