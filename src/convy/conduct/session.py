"""A run as a command plays it: the project checked before anything is spent, then the run folder
planned (or the one to resume), played, and summed up."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec

from convy.compare.comparison import NO_BASELINE, NoBaseline
from convy.conduct.assembly import Assembly
from convy.conduct.calibration import QUIET, Told
from convy.conduct.judgerun import RunCalibration
from convy.conduct.pricing import RunPrices
from convy.conduct.run import Clients, Run, RunId
from convy.errors import ConfigurationError
from convy.play.agent import Agent
from convy.play.bench import FailFast, Journal
from convy.play.budget import Budget
from convy.play.busy import Clock, WallClock
from convy.play.price import PriceBook
from convy.play.version import AgentVersion
from convy.project.document import Declaration
from convy.project.project import Project
from convy.project.shard import Slice
from convy.project.traceurl import TraceUrl
from convy.store.journal import NewerFormat, RunJournal
from convy.store.runfile import Limits, Provenance, RunFile
from convy.store.runs import StoredRun


class Prepared(msgspec.Struct, frozen=True, kw_only=True):
    """Everything a run needs, checked: scenarios, agent; the folder it plays into."""

    project: Project
    declarations: tuple[Declaration, ...]
    name: str
    agent: Agent
    folder: Path
    recorded: RunFile | None = None
    left_out: tuple[str, ...] = ()
    part: Slice = Slice()
    version: AgentVersion | None = None
    labels: Path = Path()
    """The project's labels folder as the `labels` setting names it (calibrated when it holds labels)."""
    clock: Clock = msgspec.field(default_factory=WallClock)

    def limits(self) -> Limits:
        settings = self.project.settings
        return Limits(
            concurrency=settings.concurrency,
            max_turns=settings.max_turns,
            turn_timeout=settings.turn_timeout,
            patience=settings.patience,
            model_rpm=settings.model_rpm,
            agent_rpm=settings.agent_rpm,
            budget=settings.budget,
        )

    async def play(
        self,
        provenance: Provenance,
        watch: Callable[[Run, int], Journal],
        baseline: StoredRun | NoBaseline = NO_BASELINE,
        told: Told = QUIET,
    ) -> Run:
        """Play the run's missing attempts; `watch(run, missing)` makes the journal that shows
        progress, once the folder is held and the missing attempts are known. With a baseline,
        its attempts of scenarios whose claims, checks or judge changed are judged again
        (`rejudge`), and adaptive repeats (`max-repeat`) give unclear scenarios more attempts.
        With labels, the judge is calibrated first (judgerun.py), its progress `told`."""
        settings = self.project.settings
        clients = Clients(
            settings.model_timeout,
            settings.concurrency,
            settings.model_url,
            settings.judge_url,
            tuple(member.url for member in settings.panel().members),
        )
        named = await self.agent.ready()
        build = await self.version.build(self.clock) if self.version is not None else named
        async with clients.client() as client:
            models = Assembly(self.project).models(client, self.declarations)
            run = Run.planned(
                folder=self.folder,
                agent=self.name,
                declarations=self.declarations,
                repeat=settings.repeat,
                models=models,
                limits=self.limits(),
                provenance=provenance,
                left_out=self.left_out,
                part=self.part,
                max_repeat=settings.max_repeat,
                replay=settings.replay,
                votes=settings.votes(),
                vote_temperature=settings.vote_temperature,
                floored=settings.min_pass_rate > 0,
            )
            book = PriceBook(settings.price_table())
            pricing = RunPrices(self.project, models, self.agent).pricing(book)
            run = msgspec.structs.replace(
                run, spec=msgspec.structs.replace(run.spec, price_library=book.library.version())
            )
            if self.recorded is not None:
                run = run.resumable(self.recorded.spec)
            halt = Budget(settings.budget, FailFast() if settings.fail_fast else FailFast(0, mistakes=False))
            if self.recorded is not None:
                halt.earlier(run.journal.outcomes())
            also = (baseline.folder,) if isinstance(baseline, StoredRun) else ()
            calibration = RunCalibration(self.project, self.labels, also)
            measured = await calibration.measured(client, self.folder, pricing, told)
            await run.playing(
                self.agent, models, watch, halt, build, baseline, settings.rejudge, pricing, measured
            )
            return run


class Session(msgspec.Struct, frozen=True, kw_only=True):
    """A run of `project`: a new one, or `resume` (a run folder) when given."""

    project: Project
    resume: Path | None = None

    def prepared(self) -> Prepared:
        """Check everything that can be checked before any request: scenarios, agent, the folder."""
        recorded: RunFile | None = None
        if self.resume is not None:
            journal = RunJournal(self.resume)
            if not journal.run_file.exists():
                raise ConfigurationError(str(self.resume), "is not a run folder (no run.json)")
            try:
                recorded = journal.header()
            except (NewerFormat, ValueError) as error:
                raise ConfigurationError(str(self.resume), str(error)) from None
        part = Slice.read(self.project.settings.shard)
        TraceUrl(self.project.settings.trace_url).checked()
        declarations = self.project.declarations()
        assembly = Assembly(self.project)
        assembly.check_models(declarations)
        calibration = RunCalibration.of(self.project)
        calibration.checked()
        left_out = self.project.left_out(declarations)
        name = self.project.agent_name()
        agent = assembly.agent()
        version = assembly.version()
        folder = self.resume or self.project.results / name / RunId.new().text
        return Prepared(
            project=self.project,
            declarations=declarations,
            name=name,
            agent=agent,
            folder=folder,
            recorded=recorded,
            left_out=left_out,
            part=part,
            version=version,
            labels=calibration.labels,
        )
