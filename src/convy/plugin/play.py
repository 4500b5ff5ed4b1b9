"""The one run a pytest session plays for one agent: assembled as `convy run` assembles it, with the
items pytest selected, played on an event loop of its own in a thread of its own (pytest-asyncio's
loop, or any the tests run, is never touched), reviewed and gated, its files written."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Generic, TypeVar

import msgspec

import convy
from convy import ConfigurationError, Plural, Untrusted
from convy.plugin.outcome import ItemResult
from convy.project.document import Declaration

T = TypeVar("T")


class Picked(msgspec.Struct, frozen=True, kw_only=True):
    """An item pytest selected: its scenario (`written` in Python or read from a file) and agent."""

    declaration: Declaration
    agent: str
    written: bool = False


class Selection(msgspec.Struct, frozen=True, kw_only=True):
    """What one run plays: the `names` pytest selected for `agent` ("" for the project's only one),
    the scenarios written in Python, and the baseline run folder to compare with ("" none)."""

    agent: str
    names: tuple[str, ...]
    written: tuple[Declaration, ...] = ()
    baseline: str = ""

    def narrowed(self, prepared: convy.Prepared) -> convy.Prepared:
        """`prepared` playing only the chosen scenarios; the others are left out, as `match` leaves
        them out."""
        kept = tuple(d for d in prepared.declarations if d.scenario.name in self.names)
        left = tuple(d.scenario.name for d in prepared.declarations if d.scenario.name not in self.names)
        return msgspec.structs.replace(prepared, declarations=kept, left_out=prepared.left_out + left)

    def before(self) -> convy.StoredRun | convy.NoBaseline:
        if not self.baseline:
            return convy.NO_BASELINE
        folder = Path(self.baseline)
        try:
            stored = convy.Runs(folder.parent).one(folder)
            stored.damage()
        except (convy.NewerFormat, ValueError, OSError) as error:
            raise ConfigurationError("--convy-baseline", str(error)) from None
        return stored


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

    def result(self, name: str) -> ItemResult:
        outcomes = tuple(o for o in self.reviewed.run.outcomes() if o.scenario == name)
        status = next((s.status for s in self.reviewed.comparison.scenarios if s.name == name), "")
        return ItemResult.of(outcomes, status, self.min_pass_rate, str(self.folder))

    def summary(self) -> list[str]:
        """The run folder, the gate's headline and the line that says what decided it."""
        decision = self.reviewed.decision
        headline = self.reviewed.console().splitlines()[0]
        return [
            f"convy: run folder {self.folder}",
            headline,
            f"convy gate: {decision.verdict} · Decided by {decision.rule}: {decision.explanation}",
        ]


class PytestRun(msgspec.Struct, frozen=True, kw_only=True):
    """A run as the plugin plays it: the settings' `flags` and `environ` as `convy run` reads them,
    `folder` the one `project` is relative to, `demo` the bundled demo's servers started around it."""

    flags: dict[str, object]
    environ: dict[str, str]
    folder: Path
    demo: bool = False

    def played(
        self, chosen: Selection, show: Callable[[str], None], later: Callable[[str], None]
    ) -> SessionRun:
        """Play the chosen scenarios into one run folder and review it; `show` says what is played,
        `later` what the summary says after (Ctrl+C: how to finish the run)."""
        with contextlib.ExitStack() as stack:
            flags, environ = dict(self.flags), dict(self.environ)
            if self.demo:
                demo = stack.enter_context(convy.DemoServers())
                environ.update(demo.environ())
                flags = {**demo.flags(), **flags}
            if chosen.agent:
                flags["agent"] = chosen.agent
            return self.playing(chosen, flags, environ, show, later)
        raise AssertionError("unreachable")  # pragma: no cover

    def playing(
        self,
        chosen: Selection,
        flags: dict[str, object],
        environ: dict[str, str],
        show: Callable[[str], None],
        later: Callable[[str], None],
    ) -> SessionRun:
        sources = convy.Sources(flags, environ, self.folder)
        project = convy.Project(sources.settings(), sources, environ, chosen.written)
        prepared = chosen.narrowed(convy.Session(project=project).prepared())
        before = chosen.before()
        shown: list[int] = []

        def watch(run: convy.Run, missing: int) -> convy.Ahead:
            if shown:
                show(f"convy: {Plural(missing, 'more attempt').text()} where the comparison is unclear")
            else:
                show(
                    f"convy: {Plural(missing, 'attempt').text()} of {len(run.spec.expected())} to play "
                    f"against {Untrusted(text=run.spec.agent).console(200)!r} → {run.journal.folder}"
                )
            shown.append(missing)
            # what reviews the run is imported while it plays, as `convy run` does
            return convy.Ahead(Unshown(), convy.Prefetch())

        try:
            OwnLoop[convy.Run]().ran(lambda: prepared.play(convy.Provenance(), watch, before))
        except KeyboardInterrupt:
            later(
                f"convy: interrupted; the run folder is kept: finish it with `convy resume {prepared.folder}`"
            )
            raise
        except convy.RunInUse as error:
            raise ConfigurationError("run", str(error)) from None
        stored = convy.Runs(prepared.folder.parent).one(prepared.folder)
        try:
            reviewed = convy.Review.gated(stored, before, project.settings).reviewed()
        except convy.RunsDiffer as error:
            raise ConfigurationError("--convy-baseline", str(error)) from None
        reviewed.written()
        return SessionRun(reviewed, project.settings.min_pass_rate)


class Unshown:
    """The journal a pytest run shows its attempts in: pytest's items say how each scenario did."""

    def __init__(self) -> None:
        self.count = 0

    def record(self, outcome: convy.Outcome) -> None:
        self.count += 1


class OwnLoop(Generic[T]):
    """A coroutine played on an event loop of its own, in a thread of its own, so that a loop
    already running in the test session (pytest-asyncio's) is never in its way. Ctrl+C in the main
    thread cancels it, as a signal cancels `convy run`, and is raised again once it has ended."""

    def __init__(self) -> None:
        self._task: asyncio.Task[T] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._value: list[T] = []
        self._error: list[BaseException] = []

    def ran(self, made: Callable[[], Coroutine[Any, Any, T]]) -> T:
        thread = threading.Thread(target=self._main, args=(made,), name="convy-run", daemon=True)
        thread.start()
        try:
            while thread.is_alive():
                thread.join(0.1)
        except KeyboardInterrupt:
            if self._task is not None and self._loop is not None:
                self._loop.call_soon_threadsafe(self._task.cancel, "SIGINT")
            thread.join()
            raise
        if self._error:
            raise self._error[0]
        return self._value[0]

    def _main(self, made: Callable[[], Coroutine[Any, Any, T]]) -> None:
        async def body() -> T:
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
            return await made()

        try:
            self._value.append(asyncio.run(body()))
        except BaseException as error:  # handed to the main thread, which raises it
            self._error.append(error)
