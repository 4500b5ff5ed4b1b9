"""Playing a project's scenarios against its agent into one run folder: the objects of a run
assembled with their limits, and the attempts still missing from the folder."""

from __future__ import annotations

import asyncio
import datetime
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import httpx
import msgspec

from convy.compare.comparison import NO_BASELINE, NoBaseline
from convy.compare.rejudged import Rejudgement
from convy.conduct.once import Once
from convy.conduct.stages import Staging
from convy.errors import ConfigurationError
from convy.play.agent import Agent, QueuedAgent, TimeLimited
from convy.play.attempt import Attempt
from convy.play.bench import Bench, Halt, Journal
from convy.play.busy import Patience, Places
from convy.play.dialog import Checked, Judge
from convy.play.kept import KeptTransport
from convy.play.keptclient import KeptClient
from convy.play.model import Contained, Models, PatientModel
from convy.play.outcome import Outcome
from convy.play.price import UNPRICED, Pricing
from convy.play.rate import Pace
from convy.play.votes import Jury
from convy.project.document import Declaration
from convy.project.jury import ONE, Votes
from convy.project.scenario import Scenario
from convy.project.shard import WHOLE, Slice
from convy.store.attempts import Undelivered
from convy.store.journal import Rejudged, RunJournal
from convy.store.judgerecord import NOT_MEASURED, JudgeRecord
from convy.store.runfile import Limits, Provenance, RunSpec, ScenarioEntry, Shard
from convy.store.runs import StoredRun


class RunId(msgspec.Struct, frozen=True):
    """A run's id: UTC time and a short random part, e.g. 20261130T183000Z-k3f9."""

    moment: datetime.datetime
    suffix: str

    @classmethod
    def new(cls) -> RunId:
        return cls(datetime.datetime.now(datetime.UTC), secrets.token_hex(2))

    @property
    def text(self) -> str:
        return f"{self.moment.strftime('%Y%m%dT%H%M%SZ')}-{self.suffix}"


class Run(msgspec.Struct, frozen=True, kw_only=True):
    """A run folder and what it plays: its spec and the scenarios as declared now."""

    journal: RunJournal
    spec: RunSpec
    scenarios: tuple[Scenario, ...]

    @classmethod
    def planned(
        cls,
        *,
        folder: Path,
        agent: str,
        declarations: tuple[Declaration, ...],
        repeat: int,
        models: Models,
        limits: Limits,
        provenance: Provenance,
        left_out: tuple[str, ...] = (),
        part: Slice = WHOLE,
        max_repeat: int = 0,
        replay: Literal["none", "user"] = "none",
        votes: Votes = ONE,
        vote_temperature: float = 1.0,
        floored: bool = False,
    ) -> Run:
        """A new run of `declarations` (all the project's chosen scenarios), or of this shard's
        slice of them when `part` is a shard (the spec then records the shard and the whole run)."""
        entries = tuple(
            ScenarioEntry(
                name=d.scenario.name,
                fingerprint=d.scenario.fingerprint(),
                file=d.file,
                line=d.line,
                claim_lines=d.claim_lines,
                category=d.scenario.attack.category,
                dialogue=d.scenario.dialogue(),
                criteria=d.scenario.criteria(),
                source=d.scenario.source.text(),
            )
            for d in declarations
        )
        shard = Shard() if part.whole else Shard(index=part.index, count=part.count, scenarios=entries)
        played = part.chosen(entries)
        chosen = {entry.name for entry in played}
        others = tuple(entry.name for entry in entries if entry.name not in chosen)
        spec = RunSpec(
            agent=agent,
            scenarios=played,
            repeat=repeat,
            max_repeat=max_repeat if max_repeat > repeat else 0,
            user_model=models.user.name,
            judge_model=models.judge.name,
            judge_votes=votes.text,
            judge_panel=tuple(member.name for member in models.panel),
            vote_temperature=vote_temperature,
            limits=limits,
            provenance=provenance,
            left_out=left_out + others,
            shard=shard,
            replay=replay,
            floored=floored and max_repeat > repeat,
        )
        scenarios = tuple(d.scenario for d in part.chosen(declarations))
        return cls(journal=RunJournal(folder), spec=spec, scenarios=scenarios)

    def resumable(self, recorded: RunSpec) -> Run:
        """The run as recorded, checked against the scenarios as they are now: a scenario changed
        or gone since cannot be resumed."""
        now = {s.name: s for s in self.scenarios}
        for entry in recorded.scenarios:
            scenario = now.get(entry.name)
            if scenario is None:
                raise ConfigurationError(
                    str(self.journal.folder), f"scenario {entry.name!r} is gone: cannot resume"
                )
            if scenario.fingerprint() != entry.fingerprint:
                raise ConfigurationError(
                    str(self.journal.folder),
                    f"scenario {entry.name!r} changed since the run started: cannot resume",
                )
        ordered = tuple(now[entry.name] for entry in recorded.scenarios)
        return Run(journal=self.journal, spec=recorded, scenarios=ordered)

    def missing(self, upto: int = 0) -> tuple[Attempt, ...]:
        """The attempts of the spec that the folder does not hold yet (or holds only as
        `not_delivered`: they never reached the agent), in declaration order: each scenario's first
        `upto` (its first `repeat` when 0)."""
        done = {(o.scenario, o.index) for o in self.journal.outcomes() if not Undelivered(o).undelivered}
        return tuple(
            self.attempt(scenario, index)
            for scenario in self.scenarios
            for index in range(upto or self.spec.repeat)
            if (scenario.name, index) not in done
        )

    def attempt(self, scenario: Scenario, index: int) -> Attempt:
        return Attempt(
            scenario=scenario,
            index=index,
            max_turns=scenario.max_turns or self.spec.limits.max_turns,
            run=self.journal.folder.name,
        )

    def staged(self, baseline: StoredRun | NoBaseline) -> bool:
        """Whether the run plays by stages (decision 28): max-repeat above repeat, and a baseline
        to decide against (given, or recorded by the run before it was resumed)."""
        return self.spec.max_repeat > self.spec.repeat and (
            isinstance(baseline, StoredRun) or bool(self.spec.stages)
        )

    def decided(self, baseline: StoredRun | NoBaseline) -> Run:
        """The run with its stages decided against the baseline as re-judged (kept when the spec
        records them already: a resumed run keeps its decisions)."""
        if self.spec.stages or not isinstance(baseline, StoredRun):
            return self
        before = Rejudgement(baseline, self.journal.rejudged(baseline.key), self.spec).summed().summary()
        return msgspec.structs.replace(self, spec=Staging(self.spec).decided(before))

    def further(self) -> tuple[Attempt, ...]:
        """The attempts of a staged run to play next: each scenario's next stage, as far as the rule
        and the folder say (Staging)."""
        named = {scenario.name: scenario for scenario in self.scenarios}
        return tuple(
            self.attempt(named[name], index)
            for name, index in Staging(self.spec).due(self.journal.outcomes())
            if name in named
        )

    def affected(self, before: RunSpec) -> tuple[Scenario, ...]:
        """The scenarios to re-judge against a baseline of spec `before`: its dialogue is known
        there (format 2) and the same, and its claims or checks changed, or (a scenario with
        claims) the judge model did."""
        old = {entry.name: entry for entry in before.scenarios}
        judge = before.judged_by != self.spec.judged_by
        found: list[Scenario] = []
        for scenario in self.scenarios:
            entry = old.get(scenario.name)
            if entry is None or not entry.dialogue or entry.dialogue != scenario.dialogue():
                continue
            if entry.fingerprint != scenario.fingerprint() or (judge and scenario.claims):
                found.append(scenario)
        return tuple(found)

    async def rejudge(self, baseline: StoredRun, judge: Judge) -> None:
        """Judge the baseline's attempts of the affected scenarios again (judge calls only, never
        the agent), each recorded in rejudged.jsonl as it ends; those recorded already are kept."""
        chosen = {scenario.name: scenario for scenario in self.affected(baseline.file.spec)}
        if not chosen:
            return
        done = {(r.outcome.scenario, r.outcome.index) for r in self.journal.rejudged(baseline.key)}
        room = asyncio.Semaphore(self.spec.limits.concurrency)

        async def again(before: Outcome) -> None:
            scenario = chosen[before.scenario]
            attempt = Attempt(
                scenario=scenario,
                index=before.index,
                max_turns=scenario.max_turns or self.spec.limits.max_turns,
            )
            async with room:
                outcome = await attempt.judged_again(judge, before)
            self.journal.rejudge(
                Rejudged(baseline=baseline.key, judge_model=self.spec.judge_model, outcome=outcome)
            )

        async with asyncio.TaskGroup() as group:
            for before in baseline.outcomes():
                if before.scenario in chosen and (before.scenario, before.index) not in done:
                    group.create_task(again(before))

    async def play(
        self,
        agent: Agent,
        models: Models,
        watch: Journal,
        halt: Halt | None = None,
        version: str = "",
        baseline: StoredRun | NoBaseline = NO_BASELINE,
        rejudge: bool = True,
    ) -> tuple[Outcome, ...]:
        """Play the missing attempts: each written to the folder, then shown to `watch`."""
        return await self.playing(agent, models, lambda run, missing: watch, halt, version, baseline, rejudge)

    async def playing(
        self,
        agent: Agent,
        models: Models,
        watch: Callable[[Run, int], Journal],
        halt: Halt | None = None,
        version: str = "",
        baseline: StoredRun | NoBaseline = NO_BASELINE,
        rejudge: bool = True,
        pricing: Pricing = UNPRICED,
        calibration: JudgeRecord = NOT_MEASURED,
    ) -> tuple[Outcome, ...]:
        """Play the missing attempts, worked out once run.lock is held (so two resumes of one
        folder never play the same attempt): `watch(run, missing)` makes the journal that shows
        them (and, called again, the further round of adaptive repeats); each is written to the
        folder, then shown. With `halt` (fail-fast) the run stops early
        once it has a cause, and run.json says `stopped` with it; `version` is the agent's build,
        recorded in run.json. Then, unless stopped, with a baseline: its attempts of the scenarios
        whose claims, checks or judge changed judged again (`rejudge`), and with adaptive repeats
        the further attempts of the scenarios the rule finds unclear. Each attempt is priced at
        `pricing` as it ends; run.json keeps `calibration`, the judge as measured on the labels."""
        limits = self.spec.limits
        patience = Patience(seconds=limits.patience)
        model_rate = Pace(limits.model_rpm)
        once = Once(run=self.journal.folder.name, spec=self.spec, scenarios=self.scenarios, baseline=baseline)
        bench = Bench(
            agent=QueuedAgent(
                TimeLimited(agent, limits.turn_timeout),
                Places(limits.concurrency, Pace(limits.agent_rpm), patience),
            ),
            user=PatientModel(Contained(models.user), Places(limits.concurrency, model_rate, patience)),
            judge=Checked(
                Jury(models, Votes.read(self.spec.judge_votes)).judge(
                    lambda model: PatientModel(
                        Contained(model), Places(limits.concurrency, model_rate, patience)
                    )
                )
            ),
            ahead=limits.concurrency * 2,
            pricing=pricing,
            pairs=once.pairs(),
            verdicts=once.verdicts(self.journal.outcomes()),
        )
        async with agent.kept():
            with self.journal.play(self.spec, version, calibration) as appended:
                staged = self.staged(baseline)
                # the first stage: one attempt each, or `repeat` for a run with a floor (decision 28)
                attempts = self.missing((0 if self.spec.floored else 1) if staged else 0)
                journal = Both(appended, watch(self, len(attempts)))
                outcomes = await bench.run(attempts, journal, halt)
                # a cause stops the run only when attempts were left unplayed
                missing = len(outcomes) < len(attempts)
                appended.stopped = halt.cause if halt is not None and missing else ""
                if appended.stopped:
                    return outcomes
                if rejudge and isinstance(baseline, StoredRun):
                    await self.rejudge(baseline, bench.judge)
                if not staged:
                    return outcomes
                run = self.decided(baseline)
                if run.spec != self.spec:
                    appended.respec(run.spec)
                while more := run.further():
                    played = await bench.run(more, Both(appended, watch(run, len(more))), halt)
                    outcomes += played
                    if len(played) < len(more):
                        appended.stopped = halt.cause if halt is not None else ""
                        break
                return outcomes


class Both:
    """A journal that records in one, then the other: the folder first, then what shows it."""

    def __init__(self, first: Journal, then: Journal) -> None:
        self._first = first
        self._then = then

    def record(self, outcome: Outcome) -> None:
        self._first.record(outcome)
        self._then.record(outcome)


class Clients(msgspec.Struct, frozen=True):
    """The models' one shared HTTP client: its timeouts (`model_timeout`, the models' own, apart from
    the agent's turn-timeout), its transport (KeptTransport: a kept connection lent to one request
    at a time, as many kept as requests can be in flight — two for each conversation at once, a
    user's turn and a judge's call), and TLS checks made only when a model URL (`url`, the judge's
    `judge_url`, a panel's) is https (loading the CA bundle costs ~80 ms). The transport serves every
    URL the environment's proxy settings leave alone; a proxy given there (HTTPS_PROXY...) is still
    used, through httpx's own pool."""

    model_timeout: float
    concurrency: int = 8
    url: str = "https://"
    judge_url: str = ""
    panel: tuple[str, ...] = ()
    """The panel's URLs (`judge-panel`): checked like the others."""

    def client(self) -> httpx.AsyncClient:
        urls = (self.url, self.judge_url or self.url, *self.panel)
        secure = not all(url.startswith("http://") for url in urls)
        verify = httpx.create_ssl_context() if secure else False
        return KeptClient(
            timeout=httpx.Timeout(self.model_timeout, connect=min(self.model_timeout, 30.0)),
            verify=verify,
            transport=KeptTransport(verify, keep=2 * self.concurrency),
        )
