"""Summary: one run summed up into view records — the pass rate with its Wilson interval, Tally,
attempts failed and without verdict by reason, pass^k per scenario, and a Spread for each time and
token figure. Built in one pass over the attempts; unknown stays unknown, never 0."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

import msgspec

from convy.compare.statistics import Rate, Share, Tally, Unknown
from convy.data import Data
from convy.play.agent import Usage
from convy.play.outcome import Failed, NoVerdict, Outcome, Verdict
from convy.store.journal import RunFile, ScenarioEntry
from convy.store.runs import StoredRun


class Spread(Data, frozen=True, kw_only=True):
    """How a figure spread over the attempts that reported it: median, p90, min, max; `count` is
    how many reported it. With none, every number is None (unknown)."""

    count: int = 0
    median: float | None = None
    p90: float | None = None
    least: float | None = None
    most: float | None = None
    total: float | None = None


class Reason(Data, frozen=True, kw_only=True):
    """How many attempts ended for one reason."""

    reason: str
    count: int


class FailingClaim(Data, frozen=True, kw_only=True):
    """A claim that did not pass in some attempts, with the judge's first reason."""

    claim: str
    failed: int
    judged: int
    reason: str
    line: int = 0


class ScenarioSummary(Data, frozen=True, kw_only=True):
    """One scenario of a run summed up."""

    name: str
    fingerprint: str
    file: str = ""
    line: int = 0
    attempts: int
    tally: Tally
    rate: Rate | Unknown
    pass_k: Share | Unknown
    failed: int
    no_verdict: int
    failing: tuple[FailingClaim, ...] = ()
    seconds: Spread = Spread()


class Summary(Data, frozen=True, kw_only=True):
    """A run summed up: what the comment, the console, the pages and the gate read."""

    agent: str
    run: str
    folder: str
    status: str
    started: str
    ended: str
    repeat: int
    user_model: str
    judge_model: str
    attempts: int
    expected: int
    tally: Tally
    rate: Rate | Unknown
    failed: tuple[Reason, ...]
    no_verdict: tuple[Reason, ...]
    no_verdict_share: Share | Unknown
    scenarios: tuple[ScenarioSummary, ...]
    attempt_seconds: Spread
    turn_seconds: Spread
    turns: Spread
    agent_input_tokens: Spread
    agent_output_tokens: Spread
    user_tokens: Spread
    judge_tokens: Spread
    torn: bool = False
    sha: str = ""
    ref: str = ""
    pull_request: int = 0
    failed_attempts: int = 0
    """Attempts the agent failed: judged, not holding."""
    no_verdict_attempts: int = 0
    """Attempts without a verdict: left out of the pass rate."""
    pass_k: Share | Unknown = Unknown()
    """The mean over the scenarios of their pass^k (k = repeat), as tau-bench reports it; scenarios
    with fewer than k judged attempts are left out, and with none left it is unknown."""


class Figures(msgspec.Struct):
    """The values of one figure, gathered while attempts stream past."""

    values: list[float] = msgspec.field(default_factory=list)

    def add(self, value: float | None) -> None:
        if value is not None:
            self.values.append(value)

    def spread(self) -> Spread:
        if not self.values:
            return Spread()
        ordered = sorted(self.values)
        return Spread(
            count=len(ordered),
            median=self.quantile(ordered, 0.5),
            p90=self.quantile(ordered, 0.9),
            least=ordered[0],
            most=ordered[-1],
            total=math.fsum(ordered),
        )

    def quantile(self, ordered: list[float], q: float) -> float:
        """Linear interpolation between closest ranks (numpy's default)."""
        position = (len(ordered) - 1) * q
        low = math.floor(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


class ClaimCount(msgspec.Struct):
    judged: int = 0
    failed: int = 0
    reason: str = ""


class ScenarioCount(msgspec.Struct):
    """A scenario's attempts, counted while they stream past."""

    attempts: int = 0
    held: int = 0
    judged: int = 0
    failed: int = 0
    no_verdict: int = 0
    claims: dict[str, ClaimCount] = msgspec.field(default_factory=dict)
    seconds: Figures = msgspec.field(default_factory=Figures)

    def add(self, outcome: Outcome) -> None:
        self.attempts += 1
        self.seconds.add(outcome.seconds)
        match outcome.decision:
            case Verdict(holds=holds, claims=claims):
                self.judged += 1
                self.held += holds
                for result in claims:
                    count = self.claims.setdefault(result.claim, ClaimCount())
                    count.judged += 1
                    if not result.passed:
                        count.failed += 1
                        count.reason = count.reason or result.reason
            case Failed():
                self.judged += 1
                self.failed += 1
            case NoVerdict():
                self.no_verdict += 1

    def summary(self, entry: ScenarioEntry, repeat: int) -> ScenarioSummary:
        tally = Tally(held=self.held, judged=self.judged)
        lines = entry.claim_lines
        failing = tuple(
            FailingClaim(
                claim=claim,
                failed=c.failed,
                judged=c.judged,
                reason=c.reason,
                line=lines[index] if index < len(lines) else entry.line,
            )
            for index, (claim, c) in enumerate(self.claims.items())
            if c.failed
        )
        return ScenarioSummary(
            name=entry.name,
            fingerprint=entry.fingerprint,
            file=entry.file,
            line=entry.line,
            attempts=self.attempts,
            tally=tally,
            rate=tally.rate(),
            pass_k=tally.pass_k(repeat),
            failed=self.failed,
            no_verdict=self.no_verdict,
            failing=failing,
            seconds=self.seconds.spread(),
        )


class Summing(msgspec.Struct):
    """A run's figures, summed while its attempts stream past."""

    scenarios: dict[str, ScenarioCount] = msgspec.field(default_factory=dict)
    failed: Counter[str] = msgspec.field(default_factory=Counter)
    unjudged: Counter[str] = msgspec.field(default_factory=Counter)
    attempt_seconds: Figures = msgspec.field(default_factory=Figures)
    turn_seconds: Figures = msgspec.field(default_factory=Figures)
    turns: Figures = msgspec.field(default_factory=Figures)
    agent_input: Figures = msgspec.field(default_factory=Figures)
    agent_output: Figures = msgspec.field(default_factory=Figures)
    user: Figures = msgspec.field(default_factory=Figures)
    judge: Figures = msgspec.field(default_factory=Figures)

    def add(self, outcome: Outcome) -> None:
        self.scenarios.setdefault(outcome.scenario, ScenarioCount()).add(outcome)
        match outcome.decision:
            case Failed(reason=reason):
                self.failed[reason] += 1
            case NoVerdict(reason=reason):
                self.unjudged[reason] += 1
            case Verdict():
                pass
        self.attempt_seconds.add(outcome.seconds)
        self.turns.add(float(len(outcome.turns)))
        for turn in outcome.turns:
            self.turn_seconds.add(turn.seconds)
        usages = [turn.usage for turn in outcome.turns]
        self.agent_input.add(self.total(usages, "input"))
        self.agent_output.add(self.total(usages, "output"))
        self.user.add(self.both(outcome.user_usage))
        self.judge.add(self.both(outcome.judge_usage))

    def total(self, usages: list[Usage | None], side: str) -> float | None:
        """The sum over an attempt's turns; unknown when any turn did not report it."""
        values = [getattr(u, side) if u is not None else None for u in usages]
        if not values or any(v is None for v in values):
            return None
        return float(sum(v for v in values if v is not None))

    def both(self, usage: Usage | None) -> float | None:
        if usage is None or usage.input is None or usage.output is None:
            return None
        return float(usage.input + usage.output)


class Summed(msgspec.Struct, frozen=True):
    """A run's header and its attempts, to be summed up."""

    file: RunFile
    folder: str
    outcomes: Iterable[Outcome]
    torn: bool = False

    @classmethod
    def of(cls, run: StoredRun) -> Summed:
        """A stored run's header and its attempts, streamed once when summed."""
        return cls(run.file, str(run.folder), run.outcomes(), run.torn())

    def summary(self) -> Summary:
        spec = self.file.spec
        summing = Summing()
        for outcome in self.outcomes:
            summing.add(outcome)
        scenarios = tuple(
            summing.scenarios.get(entry.name, ScenarioCount()).summary(entry, spec.repeat)
            for entry in spec.scenarios
        )
        tally = Tally(
            held=sum(s.tally.held for s in scenarios), judged=sum(s.tally.judged for s in scenarios)
        )
        attempts = sum(s.attempts for s in scenarios)
        unjudged = sum(s.no_verdict for s in scenarios)
        reliable: list[float] = []
        for scenario in scenarios:
            match scenario.pass_k:
                case Share(value=value):
                    reliable.append(value)
                case Unknown():
                    pass
        return Summary(
            agent=spec.agent,
            run=self.folder.rstrip("/").rsplit("/", 1)[-1],
            folder=self.folder,
            status=self.file.status,
            started=self.file.started,
            ended=self.file.ended,
            repeat=spec.repeat,
            user_model=spec.user_model,
            judge_model=spec.judge_model,
            attempts=attempts,
            expected=len(spec.scenarios) * spec.repeat,
            tally=tally,
            rate=tally.rate(),
            failed=tuple(Reason(reason=r, count=c) for r, c in summing.failed.most_common()),
            no_verdict=tuple(Reason(reason=r, count=c) for r, c in summing.unjudged.most_common()),
            no_verdict_share=Share(value=unjudged / attempts) if attempts else Unknown(),
            scenarios=scenarios,
            attempt_seconds=summing.attempt_seconds.spread(),
            turn_seconds=summing.turn_seconds.spread(),
            turns=summing.turns.spread(),
            agent_input_tokens=summing.agent_input.spread(),
            agent_output_tokens=summing.agent_output.spread(),
            user_tokens=summing.user.spread(),
            judge_tokens=summing.judge.spread(),
            torn=self.torn,
            sha=spec.provenance.sha,
            ref=spec.provenance.ref,
            pull_request=spec.provenance.pull_request,
            failed_attempts=sum(s.failed for s in scenarios),
            no_verdict_attempts=unjudged,
            pass_k=Share(value=min(1.0, math.fsum(reliable) / len(reliable))) if reliable else Unknown(),
        )
