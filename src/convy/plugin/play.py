"""The one run a pytest session plays for one agent: the engine's use case (`convy.Plan`) with the
items pytest selected, pytest's terminal as its display and SIGTERM and Ctrl+C as its stop, played
on an event loop of its own (in a thread of its own where one already runs), reviewed and gated, its
files written as `convy run` writes them."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import msgspec

import convy
from convy import ConfigurationError
from convy.plugin.outcome import ItemResult


class Picked(msgspec.Struct, frozen=True, kw_only=True):
    """An item pytest selected: its scenario (`written` in Python or read from a file) and agent."""

    declaration: convy.Declaration
    agent: str
    written: bool = False


class AgentItems(msgspec.Struct, frozen=True, kw_only=True):
    """What one run plays: the items pytest selected for `agent` ("" for the project's only one),
    compared with the `baseline` run folder ("" none)."""

    agent: str
    picked: tuple[Picked, ...]
    baseline: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.declaration.scenario.name for p in self.picked)

    def selection(self) -> convy.Selection:
        """The scenarios of the project's files named as `<file>::<name>`, then those written in
        Python; no other is played."""
        return convy.Selection(
            names=tuple(
                f"{p.declaration.file}::{p.declaration.scenario.name}" for p in self.picked if not p.written
            ),
            added=tuple(p.declaration for p in self.picked if p.written),
            named=True,
        )


class SessionRun(msgspec.Struct, frozen=True):
    """A run played and reviewed, with the floor its items are held to."""

    reviewed: convy.Reviewed
    min_pass_rate: float = 0.0

    @property
    def folder(self) -> Path:
        return self.reviewed.run.folder

    @property
    def gated(self) -> bool:
        return self.reviewed.decision.verdict == "pass"

    def results(self, names: tuple[str, ...]) -> dict[str, ItemResult]:
        """Each named scenario's result in the run."""
        outcomes = tuple(self.reviewed.run.outcomes())
        statuses = {change.name: change.status for change in self.reviewed.comparison.scenarios}
        return {
            name: ItemResult.of(
                tuple(o for o in outcomes if o.scenario == name),
                statuses.get(name, ""),
                self.min_pass_rate,
                str(self.folder),
            )
            for name in names
        }

    def summary(self) -> list[str]:
        """The run folder, the gate's headline and the line that says what decided it."""
        decision = self.reviewed.decision
        return [
            f"convy: run folder {self.folder}",
            self.reviewed.console().splitlines()[0],
            f"convy gate: {decision.verdict} · Decided by {decision.rule}: {decision.explanation}",
        ]


class PytestDisplay:
    """A run's progress in a pytest session: its lines on pytest's terminal (`show`), no line per
    attempt (the items report each scenario)."""

    def __init__(self, show: Callable[[str], None]) -> None:
        self._show = show

    def said(self, line: str) -> None:
        self._show(line)

    def named(self, folder: Path) -> str:
        return str(folder)

    def printed(self, total: int, most: int) -> convy.Printed:
        return convy.Printed(total, io.StringIO(), False, most)


class PytestRun(msgspec.Struct, frozen=True, kw_only=True):
    """A run as the plugin plays it: the settings' `flags` and `environ` as `convy run` reads them,
    `folder` the one `project` is relative to, `demo` the bundled demo against its own servers."""

    flags: dict[str, object]
    environ: dict[str, str]
    folder: Path
    demo: bool = False

    def played(
        self, items: AgentItems, show: Callable[[str], None], later: Callable[[str], None]
    ) -> SessionRun:
        """Play the items' scenarios into one run folder, review it and write its files; `show`
        says what is played, `later` what the summary says after (Ctrl+C: how to finish the run,
        then KeyboardInterrupt, so pytest ends as it does on Ctrl+C)."""
        flags = {**self.flags, "agent": items.agent} if items.agent else dict(self.flags)
        plan = convy.Plan(
            folder=self.folder, flags=flags, environ=self.environ, demo=self.demo, selection=items.selection()
        )
        with plan.opened() as opened:
            ready = opened.prepared()
            before = opened.baseline(items.baseline)
            try:
                reviewed = ready.played(PytestDisplay(show), convy.Signals(), before)
            except convy.RunsDiffer as error:
                raise ConfigurationError("--convy-baseline", str(error)) from None
            except convy.Interrupted as stopped:
                finish = f"`convy resume {stopped.folder}`"
                later(f"convy: interrupted; the run folder is kept: finish it with {finish}")
                raise KeyboardInterrupt from None
            reviewed.written()
            return SessionRun(reviewed, opened.project.settings.min_pass_rate)
        raise AssertionError("unreachable")  # pragma: no cover
