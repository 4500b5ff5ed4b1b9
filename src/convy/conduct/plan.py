"""The engine's use case: a project played, reviewed and gated, as every client asks for it — the
`convy` command, the GitHub Action, the pytest plugin, a program of one's own.

    plan = Plan(folder=Path("shop"), flags={"repeat": 3}, environ=os.environ)
    with plan.opened() as opened:                  # the demo's servers started (demo=True), the project read
        ready = opened.prepared()                  # everything checked, nothing sent
        reviewed = ready.played(Terminal(sys.stdout), Signals())
    reviewed.decision.exit_code                    # 0 pass, 1 fail, 3 inconclusive

A client brings its settings (`flags`, over `CONVY_*`, `[tool.convy]` and the defaults), its display
and its stop signal; it never assembles the run from the engine's parts."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import msgspec

from convy.compare.comparison import NO_BASELINE, NoBaseline
from convy.conduct.demorun import DemoRun
from convy.conduct.ready import Ready, Reviewing
from convy.conduct.session import Session
from convy.project.project import Project
from convy.project.selection import Selection
from convy.project.settings import Settings
from convy.project.sources import Sources
from convy.store.journal import RunJournal
from convy.store.runs import StoredRun

if TYPE_CHECKING:
    from convy.conduct.estimate import Estimate
    from convy.conduct.review import Reviewed

S = TypeVar("S", bound=Settings)


class Plan(msgspec.Struct, frozen=True, kw_only=True):
    """What a client asks to play.

    `folder`: the working folder, which the `project` setting is relative to (default: the current
    one); `flags`: settings by hyphenated name (`{"repeat": 3, "agent": "shop"}`), over the
    environment's `CONVY_*`, `[tool.convy]` and the defaults; `environ`: the environment (`CONVY_*`,
    and the `${VAR}` of agent files); `kind`: the Settings class to read (a program's extension of
    it); `demo`: play the bundled example against the demo's own agent and models, started for the
    run (its run folders go to `results`, relative to `folder`; empty: the `results` flag, else
    `results`) — and so does a `resume` or `follows` that is a demo run, no project named; `resume`:
    a run folder to finish instead of starting a new one (its agent played unless `agent-url` is
    given); `selection`: which scenarios to play (all by default). A plan plays
    one agent: a project with several names it in `flags` (`{"agent": "shop"}`), one plan each."""

    folder: Path = Path()
    flags: Mapping[str, object] = {}
    environ: Mapping[str, str] = {}
    kind: type[Settings] = Settings
    demo: bool = False
    results: str = ""
    resume: str = ""
    selection: Selection = Selection()
    follows: str = ""
    """A run folder the client follows up on (`convy label RUN`): like `resume`, a run of the demo's
    makes this a demo plan when no project is named."""

    @contextlib.contextmanager
    def opened(self) -> Iterator[Opened]:
        """The project read with its settings (ConfigurationError naming the setting and where it
        was given) — with `demo`, the demo's servers started until the block ends."""
        from convy.demo.servers import DemoServers

        with contextlib.ExitStack() as stack:
            flags, environ = dict(self.flags), dict(self.environ)
            demo_run = self.demo or DemoRun(self.resume or self.follows, flags, environ).made()
            if demo_run:
                demo = stack.enter_context(DemoServers())
                environ.update(demo.environ())
                results = self.folder.absolute() / str(self.results or flags.get("results", "results"))
                flags = {**demo.flags(), **flags, "results": str(results), "project": str(demo.project)}
            resumed = Path(self.resume)
            if self.resume and "agent-url" not in flags and (resumed / "run.json").exists():
                with contextlib.suppress(Exception):
                    flags.setdefault("agent", RunJournal(resumed).header().spec.agent)
            sources = Sources(flags, environ, self.folder)
            project = Project(sources.settings(self.kind), sources, environ, self.selection)
            yield Opened(plan=self, project=project, demo=demo_run)


class Opened(msgspec.Struct, frozen=True, kw_only=True):
    """A `plan`'s `project`, read (the demo's servers running for a demo plan)."""

    plan: Plan
    project: Project
    demo: bool = False
    """Whether it plays the demo: asked for, or a follow-up of a demo run."""

    def settings(self, kind: type[S]) -> S:
        """The settings read, as the `kind` the plan asked for."""
        settings = self.project.settings
        if not isinstance(settings, kind):
            raise TypeError(f"the plan read {type(settings).__name__}, not {kind.__name__}")
        return settings

    def prepared(self, resume: Path | str = "") -> Ready:
        """The run checked before anything is spent — scenarios, agent, models' keys, labels, the
        folder (ConfigurationError naming what to fix) — a new one, or `resume` (default: the
        plan's) to finish."""
        folder = str(resume or self.plan.resume)
        session = Session(project=self.project, resume=Path(folder) if folder else None)
        return Ready(session.prepared())

    def baseline(self, folder: Path | str) -> StoredRun | NoBaseline:
        """The run folder to compare with (`--baseline RUN`; none when `folder` is empty), read back;
        ConfigurationError naming it when it is not a run folder or is newer than this convy."""
        if not str(folder):
            return NoBaseline(why="no baseline given")
        return Reviewing(self.project.settings).read(Path(folder))

    def estimate(self, baseline: StoredRun | NoBaseline = NO_BASELINE) -> Estimate:
        """What the run would spend — model calls, tokens, dollars — worked out from `baseline`'s
        attempts without a single request (`convy estimate`, the action's `estimate: true`)."""
        from convy.conduct.estimate import Estimating

        return Estimating(self.project, baseline).estimate()

    def reviewed(self, folder: Path, baseline: StoredRun | NoBaseline = NO_BASELINE) -> Reviewed:
        """A run folder already played (a merged run, or one played against a baseline that cannot
        be compared with it) reviewed against `baseline` and gated."""
        return Reviewing(self.project.settings).reviewed(folder, baseline)
