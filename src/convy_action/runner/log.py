"""Log: the job's log as the runner takes it — plain lines, workflow commands, and text the action
does not trust printed with workflow commands switched off. It writes to the stream the
composition root gives it (the process's standard output), so a test reads it from a StringIO."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TextIO

from convy_action.runner.outputs import Command, Stopped


class Log:
    """The job's log: plain lines, workflow commands, and text the action does not trust printed
    with workflow commands switched off."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def line(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def command(self, command: Command) -> None:
        self.line(command.text())

    def warning(self, text: str) -> None:
        self.command(Command("warning", text))

    @contextlib.contextmanager
    def untrusted(self) -> Iterator[None]:
        stopped = Stopped.new()
        self.line(stopped.start)
        try:
            yield
        finally:
            self.line(stopped.end)

    def shown(self, title: str, text: str) -> None:
        """`text` (agent and model words included) folded under `title`, commands off."""
        self.command(Command("group", title))
        with self.untrusted():
            self.line(text.rstrip("\n"))
        self.command(Command("endgroup"))
