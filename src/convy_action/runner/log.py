"""The job's log as the runner takes it: plain lines, workflow commands, and text the action does
not trust printed with workflow commands switched off; no line carries a control character.

It writes to the stream the composition root gives it (the process's standard output), so a test
reads it from a StringIO. Outside GitHub Actions (a dry run on a laptop) no workflow command is
written: a mask would print the very secret it hides, and `::group::` is noise on a terminal (see
docs/action.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TextIO

from convy.tools import Untrusted
from convy_action.runner.outputs import Stopped, WorkflowCommand


class Log:
    """The job's log: plain lines, workflow commands, and text the action does not trust printed
    with workflow commands switched off."""

    def __init__(self, out: TextIO, commands: bool = True) -> None:
        self.out = out
        self.commands = commands
        """Whether workflow commands are written (under GitHub Actions); else their plain words."""

    def line(self, text: str) -> None:
        """`text` as one or more lines of the log, every control character (an ANSI escape, a bell)
        and bidirectional override in it replaced, whoever's words it holds."""
        self.out.write(Untrusted(text=text).page() + "\n")
        self.out.flush()

    def command(self, command: WorkflowCommand) -> None:
        if self.commands:
            self.line(command.text())
            return
        match command.name:
            case "error" | "warning" | "notice":
                self.line(f"{command.name}: {command.message}")
            case "group":
                self.line(f"── {command.message}")
            case _:
                pass  # add-mask above all: never print a secret to hide it

    def warning(self, text: str) -> None:
        self.command(WorkflowCommand("warning", text))

    @contextlib.contextmanager
    def untrusted(self) -> Iterator[None]:
        if not self.commands:
            yield
            return
        stopped = Stopped.new()
        self.line(stopped.start)
        try:
            yield
        finally:
            self.line(stopped.end)

    def shown(self, title: str, text: str) -> None:
        """`text` (agent and model words included) folded under `title`, commands off."""
        self.command(WorkflowCommand("group", title))
        with self.untrusted():
            self.line(text.rstrip("\n"))
        self.command(WorkflowCommand("endgroup"))
