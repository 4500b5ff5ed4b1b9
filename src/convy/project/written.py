"""Scenarios written in Python: `convy.scenario(name, ...)` called at a test module's top level, with
the keys of a scenario file, and checks that may be Python functions of the attempt's dialogue.
Registering one does no I/O and sends nothing; the pytest plugin makes each an item of its module."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import msgspec

from convy.errors import ConfigurationError
from convy.project.scenario import Check, Claim, Scenario


class FunctionCheck(Check, frozen=True, kw_only=True):
    """A check made by a Python function of the attempt's dialogue (its turns, each with `user`,
    `agent` and `steps`): it passes when the function returns True or None, fails with its message
    when it returns False or a string or raises AssertionError; any other exception fails the check
    with its type and message. It is recorded under the function's name."""

    function: Callable[..., object]

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise ValueError("`checks` item is not callable")

    @property
    def name(self) -> str:
        """The function's name, as the check is recorded: `no_refund_without_order`."""
        return str(getattr(self.function, "__name__", type(self.function).__name__))

    @property
    def kind(self) -> str:
        return "function"

    @property
    def value(self) -> str:
        return self.name

    def text(self) -> str:
        return self.name

    def fingerprinted(self) -> dict[str, object]:
        """The function's name and its compiled code: a changed body is a changed check."""
        code = getattr(self.function, "__code__", None)
        body = b"" if code is None else code.co_code + repr(code.co_consts).encode()
        return {"function": self.name, "code": hashlib.sha256(body).hexdigest()[:16]}


class Written:
    """The scenarios written in Python so far, by the file of the module that wrote them (a module
    imported again replaces its scenarios of the same name)."""

    def __init__(self) -> None:
        self._files: dict[str, dict[str, tuple[int, Scenario]]] = {}

    def add(self, file: str, line: int, scenario: Scenario) -> None:
        self._files.setdefault(os.path.abspath(file), {})[scenario.name] = (line, scenario)

    def of(self, file: Path) -> tuple[tuple[int, Scenario], ...]:
        """The scenarios `file` wrote, each with the line that wrote it, in their order."""
        return tuple(self._files.get(os.path.abspath(file), {}).values())


WRITTEN = Written()
"""Every scenario written in Python by a module imported in this process."""


class Writing:
    """`convy.scenario`: a scenario written in Python registered in `written`."""

    def __init__(self, written: Written) -> None:
        self._written = written

    def __call__(
        self,
        name: str,
        *,
        user: str = "",
        opening: str = "",
        turns: Iterable[str] = (),
        max_turns: int = 0,
        claims: Iterable[str | Mapping[str, object]] = (),
        checks: Iterable[Check | Mapping[str, object] | Callable[..., object]] = (),
        tags: Iterable[str] = (),
    ) -> Scenario:
        """Register a scenario written in Python, with the keys of a scenario file; each check may
        also be a function of the attempt's dialogue. Returns the scenario; a mistake in it is a
        ConfigurationError naming the file and line of the call. Nothing is read or sent."""
        caller = sys._getframe(1)
        file = str(caller.f_globals.get("__file__", "<python>"))
        where = f"{file}:{caller.f_lineno}"
        if not name.strip():
            raise ConfigurationError(where, "a scenario needs a name")
        try:
            read = Scenario(
                name=name,
                user=user,
                opening=opening,
                turns=tuple(turns),
                max_turns=max_turns,
                claims=msgspec.convert(list(claims), tuple[Claim, ...]),
                checks=tuple(self.check(check) for check in checks),
                tags=tuple(tags),
            )
        except (ValueError, TypeError, msgspec.ValidationError) as error:
            raise ConfigurationError(where, str(error)) from None
        self._written.add(file, caller.f_lineno, read)
        return read

    def check(self, check: Check | Mapping[str, object] | Callable[..., object]) -> Check:
        """One check as written: a Check, a mapping with a scenario file's keys, or a function."""
        if isinstance(check, Check):
            return check
        if isinstance(check, Mapping):
            return msgspec.convert(dict(check), Check)
        return FunctionCheck(function=check)


scenario = Writing(WRITTEN)
"""Register a scenario written in Python: `convy.scenario(name, user=..., claims=..., checks=...)`."""
