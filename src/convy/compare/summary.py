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
    """How many attempts ended for one reason, with the commonest HTTP status and message among them
    (the service's own words where it gave some, else convy's detail; empty when there is none)."""

    reason: str
    count: int
    status: int = 0
    message: str = ""


PARTIES: tuple[str, ...] = ("agent", "user model", "judge", "busy", "convy")
"""Whose an attempt that did not hold is, in the order the comment lists them (DESIGN §13.2):
the agent (claims failed, or it failed), the simulated user's model, the judge, a service busy
beyond patience; `convy` for convy's own bug in one attempt."""

NO_VERDICT_PARTIES: dict[str, str] = {
    "user_timeout": "user model",
    "user_failure": "user model",
    "no_dialogue": "user model",
    "judge_timeout": "judge",
    "judge_failure": "judge",
    "judge_unreadable": "judge",
    "agent_busy": "busy",
    "model_busy": "busy",
    "internal_error": "convy",
}
"""The party of each no-verdict reason that names its role; `model_failure` (older folders) and
`context_exceeded` say theirs by the start of their detail (`user: `, `judge: `)."""


class Whose(msgspec.Struct, frozen=True, kw_only=True):
    """Whose an attempt without verdict is, by its reason (and for `model_failure` and
    `context_exceeded`, by the role its detail starts with)."""

    reason: str
    detail: str = ""

    def party(self) -> str:
        known = NO_VERDICT_PARTIES.get(self.reason)
        if known is not None:
            return known
        return "user model" if self.detail.startswith("user: ") else "judge"


class Party(Data, frozen=True, kw_only=True):
    """The attempts that did not hold by one party's doing: how many, the commonest reason among
    them, and its commonest message (for the agent's failed claims: the judge's first reason)."""

    party: str
    count: int
    reason: str
    message: str = ""


class FailingClaim(Data, frozen=True, kw_only=True):
    """A claim that did not pass in some attempts, with the judge's first reason."""

    claim: str
    failed: int
    judged: int
    reason: str
    line: int = 0


class Rejudging(Data, frozen=True, kw_only=True):
    """What re-judging a baseline took: the scenarios and attempts judged again with today's claims,
    checks and judge, and the judge's tokens for it (None: unknown, no call reported them)."""

    scenarios: int = 0
    attempts: int = 0
    judge_tokens: int | None = None


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
    rejudged: bool = False
    """Its attempts (a baseline's) were judged again with today's claims, checks and judge."""
    first: Tally = msgspec.field(default_factory=lambda: Tally(held=0, judged=0))
    """The attempts of the first round (index < repeat): what decided whether more were played."""


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
    first_seconds: Spread = Spread()
    """Time to first token of the streamed turns (count 0 when no turn was streamed)."""
    rejudging: Rejudging = Rejudging()
    """For a baseline read with its dialogues re-judged by the current run: what that took."""
    max_repeat: int = 0
    """The most attempts a scenario could get (more than `repeat`: adaptive repeats were on)."""
    pass_k: Share | Unknown = Unknown()
    """The mean over the scenarios of their pass^k (k = repeat), as tau-bench reports it; scenarios
    with fewer than k judged attempts are left out, and with none left it is unknown."""
    parties: tuple[Party, ...] = ()
    """Whose each attempt that did not hold is, in the order of PARTIES (parties with none left out)."""
    left_out: tuple[str, ...] = ()
    """Scenarios of the project the run did not play (left out by `match` or a shard)."""
    stopped: str = ""
    """Why the run stopped early (fail-fast), empty when it did not."""
    agent_version: str = ""
    """The build of the agent that answered, as agent-version-url reported it (empty: unknown)."""


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

    repeat: int = 0
    attempts: int = 0
    held: int = 0
    judged: int = 0
    first_held: int = 0
    first_judged: int = 0
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
                if outcome.index < self.repeat:
                    self.first_judged += 1
                    self.first_held += holds
                for result in claims:
                    count = self.claims.setdefault(result.claim, ClaimCount())
                    count.judged += 1
                    if not result.passed:
                        count.failed += 1
                        count.reason = count.reason or result.reason
            case Failed():
                self.judged += 1
                self.failed += 1
                if outcome.index < self.repeat:
                    self.first_judged += 1
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
            first=Tally(held=self.first_held, judged=self.first_judged),
        )


class Said(msgspec.Struct):
    """The reasons of one kind of ending, with the statuses and messages seen for each, counted."""

    reasons: Counter[str] = msgspec.field(default_factory=Counter)
    statuses: dict[str, Counter[int]] = msgspec.field(default_factory=dict)
    messages: dict[str, Counter[str]] = msgspec.field(default_factory=dict)

    def add(self, reason: str, status: int = 0, message: str = "") -> None:
        self.reasons[reason] += 1
        self.statuses.setdefault(reason, Counter())[status] += 1
        if message:
            self.messages.setdefault(reason, Counter())[message] += 1

    def counted(self) -> tuple[Reason, ...]:
        return tuple(
            Reason(
                reason=reason,
                count=count,
                status=self.statuses[reason].most_common(1)[0][0],
                message=self.message(reason),
            )
            for reason, count in self.reasons.most_common()
        )

    def message(self, reason: str) -> str:
        messages = self.messages.get(reason)
        return messages.most_common(1)[0][0] if messages else ""


class Blame(msgspec.Struct):
    """Whose each attempt that did not hold is, counted while the attempts stream past."""

    parties: dict[str, Said] = msgspec.field(default_factory=dict)

    def add(self, decision: Verdict | Failed | NoVerdict) -> None:
        match decision:
            case Verdict(holds=True):
                return
            case Verdict(claims=claims):
                reason = next((c.reason for c in claims if not c.passed), "")
                self.said("agent").add("claims_failed", 0, reason)
            case Failed(reason=reason, status=status, message=message, detail=detail):
                self.said("agent").add(reason, status, message or detail)
            case NoVerdict(reason=reason, status=status, message=message, detail=detail):
                self.said(self.party(reason, detail)).add(reason, status, message or self.bare(detail))

    def party(self, reason: str, detail: str) -> str:
        return Whose(reason=reason, detail=detail).party()

    def bare(self, detail: str) -> str:
        """A detail without the role it starts with (the party says it)."""
        for role in ("user: ", "judge: "):
            if detail.startswith(role):
                return detail[len(role) :]
        return detail

    def said(self, party: str) -> Said:
        return self.parties.setdefault(party, Said())

    def counted(self) -> tuple[Party, ...]:
        found: list[Party] = []
        for party in PARTIES:
            said = self.parties.get(party)
            if said is None:
                continue
            reason, _ = said.reasons.most_common(1)[0]
            found.append(
                Party(
                    party=party,
                    count=sum(said.reasons.values()),
                    reason=reason,
                    message=said.message(reason),
                )
            )
        return tuple(found)


class Summing(msgspec.Struct):
    """A run's figures, summed while its attempts stream past."""

    repeat: int = 0
    scenarios: dict[str, ScenarioCount] = msgspec.field(default_factory=dict)
    failed: Said = msgspec.field(default_factory=Said)
    unjudged: Said = msgspec.field(default_factory=Said)
    blame: Blame = msgspec.field(default_factory=Blame)
    attempt_seconds: Figures = msgspec.field(default_factory=Figures)
    turn_seconds: Figures = msgspec.field(default_factory=Figures)
    first_seconds: Figures = msgspec.field(default_factory=Figures)
    turns: Figures = msgspec.field(default_factory=Figures)
    agent_input: Figures = msgspec.field(default_factory=Figures)
    agent_output: Figures = msgspec.field(default_factory=Figures)
    user: Figures = msgspec.field(default_factory=Figures)
    judge: Figures = msgspec.field(default_factory=Figures)

    def add(self, outcome: Outcome) -> None:
        self.scenarios.setdefault(outcome.scenario, ScenarioCount(repeat=self.repeat)).add(outcome)
        match outcome.decision:
            case Failed(reason=reason, status=status, message=message, detail=detail):
                self.failed.add(reason, status, message or detail)
            case NoVerdict(reason=reason, status=status, message=message, detail=detail):
                self.unjudged.add(reason, status, message or self.blame.bare(detail))
            case Verdict():
                pass
        self.blame.add(outcome.decision)
        self.attempt_seconds.add(outcome.seconds)
        self.turns.add(float(len(outcome.turns)))
        for turn in outcome.turns:
            self.turn_seconds.add(turn.seconds)
            if turn.first is not None:
                self.first_seconds.add(turn.first)
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
    rejudged: frozenset[str] = frozenset()
    """The scenarios whose outcomes are re-judged ones (a baseline as the current run judged it)."""

    @classmethod
    def of(cls, run: StoredRun) -> Summed:
        """A stored run's header and its attempts, streamed once when summed."""
        return cls(run.file, str(run.folder), run.outcomes(), run.torn())

    def summary(self) -> Summary:
        spec = self.file.spec
        summing = Summing(repeat=spec.repeat)
        judged_again = 0
        tokens: list[int] = []
        for outcome in self.outcomes:
            summing.add(outcome)
            if outcome.scenario in self.rejudged:
                judged_again += 1
                usage = outcome.judge_usage
                if usage is not None and (usage.input is not None or usage.output is not None):
                    tokens.append((usage.input or 0) + (usage.output or 0))
        scenarios = tuple(
            msgspec.structs.replace(summary, rejudged=True) if summary.name in self.rejudged else summary
            for summary in (
                summing.scenarios.get(entry.name, ScenarioCount()).summary(entry, spec.repeat)
                for entry in spec.scenarios
            )
        )
        again = Rejudging(
            scenarios=sum(1 for s in scenarios if s.rejudged),
            attempts=judged_again,
            judge_tokens=sum(tokens) if tokens else None,
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
            max_repeat=max(spec.max_repeat, spec.repeat),
            user_model=spec.user_model,
            judge_model=spec.judge_model,
            attempts=attempts,
            expected=len(spec.scenarios) * spec.repeat,
            tally=tally,
            rate=tally.rate(),
            failed=summing.failed.counted(),
            no_verdict=summing.unjudged.counted(),
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
            first_seconds=summing.first_seconds.spread(),
            pass_k=Share(value=min(1.0, math.fsum(reliable) / len(reliable))) if reliable else Unknown(),
            parties=summing.blame.counted(),
            left_out=spec.left_out,
            stopped=self.file.reason if self.file.status == "stopped" else "",
            agent_version=self.file.agent_version,
            rejudging=again,
        )
