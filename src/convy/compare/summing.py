"""What a run's figures add up to while its attempts stream past, in one pass: each figure's values,
the counts of scenarios and claims, the reasons with their commonest status and message, whose each
attempt that did not hold is, and what reused verdicts and replayed turns spared. summary.py reads
them once the attempts have passed."""

from __future__ import annotations

import math
from collections import Counter

import msgspec

from convy.compare.money import Costs
from convy.compare.parts import UNHELD, FailingClaim, Party, Reason, Savings, ScenarioSummary, Spread, Traced
from convy.compare.statistics import Tally
from convy.play.agent import Usage
from convy.play.outcome import Failed, NoVerdict, Outcome, Verdict
from convy.store.runfile import ScenarioEntry

PARTIES: tuple[str, ...] = ("agent", "user model", "judge", "busy", "convy")
"""Whose an attempt that did not hold is, in the order the comment lists them (see docs/gate.md):
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


class FigureValues(msgspec.Struct):
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
    split: str = ""
    check: bool = False


class ReasonTally(msgspec.Struct):
    """The reasons of one kind of ending, with the statuses and messages seen for each, counted."""

    reasons: Counter[str] = msgspec.field(default_factory=Counter)
    statuses: dict[str, Counter[int]] = msgspec.field(default_factory=dict)
    messages: dict[str, Counter[str]] = msgspec.field(default_factory=dict)
    checks: set[str] = msgspec.field(default_factory=set)
    """The messages a deterministic check gave (a failed check's reason), not the judge."""

    def add(self, reason: str, status: int = 0, message: str = "", check: bool = False) -> None:
        self.reasons[reason] += 1
        self.statuses.setdefault(reason, Counter())[status] += 1
        if message:
            self.messages.setdefault(reason, Counter())[message] += 1
            if check:
                self.checks.add(message)

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


class ScenarioCount(msgspec.Struct):
    """A scenario's attempts, counted while they stream past."""

    repeat: int = 0
    ends: tuple[int, ...] = ()
    """Where a staged run's stages end (decision 28); empty: no stages."""
    attempts: int = 0
    held: int = 0
    judged: int = 0
    first_held: int = 0
    first_judged: int = 0
    failed: int = 0
    no_verdict: int = 0
    claims: dict[str, ClaimCount] = msgspec.field(default_factory=dict)
    seconds: FigureValues = msgspec.field(default_factory=FigureValues)
    unheld: list[Traced] = msgspec.field(default_factory=list)
    costs: Costs = msgspec.field(default_factory=Costs)
    staged: dict[int, Tally] = msgspec.field(default_factory=dict)
    """Each stage's attempts judged and held, by the stage's place (those with any attempt)."""
    failures: ReasonTally = msgspec.field(default_factory=ReasonTally)
    """Why the agent failed its attempts, with the service's words."""

    def add(self, outcome: Outcome) -> None:
        self.attempts += 1
        self.seconds.add(outcome.seconds)
        self.costs.add(outcome)
        if self.ends:
            last = len(self.ends) - 1
            stage = next((place for place, end in enumerate(self.ends) if outcome.index < end), last)
            tally = self.staged.get(stage, Tally(held=0, judged=0))
            self.staged[stage] = tally.plus(Tally.of(outcome.decision))
        match outcome.decision:
            case Verdict(holds=holds, claims=claims):
                self.judged += 1
                self.held += holds
                if not holds:
                    self.traced(outcome)
                if outcome.index < self.repeat:
                    self.first_judged += 1
                    self.first_held += holds
                for result in claims:
                    count = self.claims.setdefault(result.claim, ClaimCount())
                    count.judged += 1
                    count.check = result.checked
                    if not result.passed:
                        count.failed += 1
                        if not count.reason:
                            count.reason, count.split = result.reason, result.split
            case Failed(reason=reason, status=status, message=message, detail=detail):
                self.judged += 1
                self.failed += 1
                self.failures.add(reason, status, message or detail)
                self.traced(outcome)
                if outcome.index < self.repeat:
                    self.first_judged += 1
            case NoVerdict():
                self.no_verdict += 1

    def traced(self, outcome: Outcome) -> None:
        """An attempt that did not hold, kept for its trace link while fewer than UNHELD are."""
        if len(self.unheld) < UNHELD:
            self.unheld.append(
                Traced(index=outcome.index, trace_id=outcome.trace_id, conversation=outcome.conversation)
            )

    def summary(self, entry: ScenarioEntry, repeat: int) -> ScenarioSummary:
        tally = Tally(held=self.held, judged=self.judged)
        lines = entry.claim_lines
        failing = tuple(
            FailingClaim(
                claim=claim,
                failed=c.failed,
                judged=c.judged,
                reason=c.reason,
                split=c.split,
                line=lines[index] if index < len(lines) else entry.line,
                check=c.check,
            )
            for index, (claim, c) in enumerate(self.claims.items())
            if c.failed
        )
        return ScenarioSummary(
            name=entry.name,
            fingerprint=entry.fingerprint,
            file=entry.file,
            line=entry.line,
            source=entry.source,
            attempts=self.attempts,
            tally=tally,
            rate=tally.rate(),
            pass_k=tally.pass_k(repeat),
            failed=self.failed,
            no_verdict=self.no_verdict,
            failing=failing,
            failures=self.failures.counted()[:1],
            seconds=self.seconds.spread(),
            first=Tally(held=self.first_held, judged=self.first_judged),
            unheld=tuple(sorted(self.unheld, key=lambda traced: traced.index)),
            cost=self.costs.money(),
            stages=tuple(
                self.staged.get(stage, Tally(held=0, judged=0))
                for stage in range(max(self.staged, default=-1) + 1)
            ),
            against=None
            if entry.against is None
            else Tally(held=entry.against.held, judged=entry.against.judged),
            category=entry.category,
        )


class Blame(msgspec.Struct):
    """Whose each attempt that did not hold is, counted while the attempts stream past."""

    parties: dict[str, ReasonTally] = msgspec.field(default_factory=dict)

    def add(self, decision: Verdict | Failed | NoVerdict) -> None:
        match decision:
            case Verdict(holds=True):
                return
            case Verdict(claims=claims):
                first = next((c for c in claims if not c.passed), None)
                self.said("agent").add(
                    "claims_failed", 0, first.reason if first else "", first is not None and first.checked
                )
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

    def said(self, party: str) -> ReasonTally:
        return self.parties.setdefault(party, ReasonTally())

    def counted(self) -> tuple[Party, ...]:
        found: list[Party] = []
        for party in PARTIES:
            said = self.parties.get(party)
            if said is None:
                continue
            reason, _ = said.reasons.most_common(1)[0]
            message = said.message(reason)
            found.append(
                Party(
                    party=party,
                    count=sum(said.reasons.values()),
                    reason=reason,
                    message=message,
                    check=message in said.checks,
                )
            )
        return tuple(found)


class Spared(msgspec.Struct):
    """What paying once spared, added up while the attempts stream past."""

    verdicts: int = 0
    turns: int = 0
    money: list[float] = msgspec.field(default_factory=list)
    unknown: bool = False

    def add(self, outcome: Outcome) -> None:
        self.verdicts += outcome.reused is not None
        self.turns += sum(turn.replayed for turn in outcome.turns)
        if outcome.saved is None:
            return
        for part in (outcome.saved.user, outcome.saved.judge):
            if part is None:
                self.unknown = True
            else:
                self.money.append(part)

    def savings(self) -> Savings:
        return Savings(
            verdicts=self.verdicts, turns=self.turns, money=math.fsum(self.money), unknown=self.unknown
        )


class Summing(msgspec.Struct):
    """A run's figures, summed while its attempts stream past."""

    repeat: int = 0
    ends: tuple[int, ...] = ()
    scenarios: dict[str, ScenarioCount] = msgspec.field(default_factory=dict)
    failed: ReasonTally = msgspec.field(default_factory=ReasonTally)
    unjudged: ReasonTally = msgspec.field(default_factory=ReasonTally)
    blame: Blame = msgspec.field(default_factory=Blame)
    attempt_seconds: FigureValues = msgspec.field(default_factory=FigureValues)
    turn_seconds: FigureValues = msgspec.field(default_factory=FigureValues)
    first_seconds: FigureValues = msgspec.field(default_factory=FigureValues)
    turns: FigureValues = msgspec.field(default_factory=FigureValues)
    agent_input: FigureValues = msgspec.field(default_factory=FigureValues)
    agent_output: FigureValues = msgspec.field(default_factory=FigureValues)
    user: FigureValues = msgspec.field(default_factory=FigureValues)
    judge: FigureValues = msgspec.field(default_factory=FigureValues)
    spared: Spared = msgspec.field(default_factory=Spared)
    costs: Costs = msgspec.field(default_factory=Costs)

    def add(self, outcome: Outcome) -> None:
        self.costs.add(outcome)
        count = self.scenarios.setdefault(outcome.scenario, ScenarioCount(repeat=self.repeat, ends=self.ends))
        count.add(outcome)
        self.spared.add(outcome)
        match outcome.decision:
            case Failed(reason=reason, status=status, message=message, detail=detail):
                # a request that never reached the agent is said with where it went (its URL)
                said = detail.partition(": ")[2] if reason == "not_delivered" else message
                self.failed.add(reason, status, said or detail)
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
        # the model tokens of an attempt that asked the model: a reused verdict asked no judge, a
        # dialogue replayed whole no user model (their 0 tokens would pull the median down)
        if not outcome.turns or not all(turn.replayed for turn in outcome.turns):
            self.user.add(self.both(outcome.user_usage))
        if outcome.reused is None:
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
