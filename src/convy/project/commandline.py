"""The command line read strictly: a flag is taken only by its whole name (no abbreviation:
`--min-pass` is not `--min-pass-rate`), and an unknown or misspelt one is refused by the very
(sub)command it was given to, with that command's usage and the nearest flag it has ("did you
mean --repeat?"). The `convy` command and the action read their flags with it."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence
from typing import NoReturn

import msgspec

EXITS: dict[int, str] = {
    0: "pass",
    1: "fail",
    2: "configuration error (a file, a setting or a flag to fix)",
    3: "inconclusive",
    130: "interrupted (Ctrl+C)",
    141: "its output was closed (`| head`)",
    143: "stopped (SIGTERM)",
}
"""What each exit code means, for the help of the commands that may end with it."""


class ExitCodes(msgspec.Struct, frozen=True):
    """The exit codes a command may end with, as its help lists them."""

    codes: tuple[int, ...] = (0, 1, 2, 3)

    def text(self) -> str:
        """`exit codes: 0 pass, 1 fail, …`, for the help's epilog."""
        return "exit codes: " + ", ".join(f"{code} {EXITS[code]}" for code in self.codes)


class CommandLine(argparse.ArgumentParser):
    """A command's flags as argparse reads them, built with `allow_abbrev=False`; an unknown flag
    is named with the nearest flag of this command (parse_args refuses it; parse_known_args hands it
    back, for a program that says it its own way)."""

    def nearest(self, given: str) -> str:
        """The flag of this command nearest to `given` (its part before `=`), "" when none is close:
        the one flag it begins, else the closest by spelling."""
        flag = given.split("=", 1)[0]
        flags = [name for action in self._actions for name in action.option_strings if name.startswith("--")]
        if not flag.startswith("-") or flag in flags:
            return ""
        begun = [name for name in flags if name.startswith(flag)]
        if len(begun) == 1:
            return begun[0]
        close = difflib.get_close_matches(flag, flags, n=1, cutoff=0.6)
        return close[0] if close else ""

    def unknown(self, extras: Sequence[str]) -> str:
        """Why `extras` are refused: each unknown flag, with the nearest flag where one is close."""
        flags = [extra for extra in extras if extra.startswith("-") and extra != "-"]
        if not flags:
            return f"unrecognized arguments: {' '.join(extras)}"
        said = []
        for given in flags:
            near = self.nearest(given)
            hint = f": did you mean {near}?" if near else ""
            said.append(f"{given.split('=', 1)[0]} is not a flag of {self.prog}{hint}")
        return "; ".join(said)

    def error(self, message: str) -> NoReturn:
        """Exit 2 with what is wrong on the first line (the nearest flag with it), then the usage."""
        self.exit(2, f"{self.prog}: error: {message}\n{self.format_usage()}")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(self.unknown(extras))
        return parsed


class Subcommand(CommandLine):
    """A subcommand's flags (`convy run`): an unknown one is refused here, with this subcommand's
    usage, rather than handed up to the command, which would show its own usage."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(self.unknown(extras))
        return parsed, extras
