"""What a run would spend, worked out without a single request: from the baseline's attempts of each
scenario, their medians of model calls, tokens and cost (priced at today's prices), times the
attempts the run plays; without a baseline it cannot know, and says so."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import httpx
import msgspec

from convy.compare.comparison import NoBaseline
from convy.compare.money import Money
from convy.conduct.assembly import Assembly
from convy.conduct.pricing import RunPrices
from convy.data import Data
from convy.play.agent import Usage
from convy.play.outcome import Failed, NoVerdict, Outcome, Verdict
from convy.play.price import PriceBook, Pricing
from convy.project.project import Project
from convy.project.scenario import Scenario
from convy.project.shard import Slice
from convy.store.runs import StoredRun
from convy.words import Plural

PARTIES = ("user", "judge", "agent")


class Spending(Data, frozen=True, kw_only=True):
    """What one attempt asked of each party (in the order of PARTIES) — model calls, tokens — and
    what it cost; None where unknown."""

    calls: tuple[int, int, int]
    tokens: tuple[int | None, int | None, int | None]
    usd: tuple[float | None, float | None, float | None]
    spared: tuple[bool, bool, bool] = (False, False, False)
    """Where the party was not asked after all — the user's turns all replayed, the verdict reused:
    its tokens and cost say nothing of what asking costs, so its medians leave this attempt out."""


class Seen(msgspec.Struct, frozen=True):
    """A baseline attempt of a scenario as the scenario is now, its tokens priced at `pricing`.
    The user model was called for each turn after the script, and once more when it finished the
    dialogue; the judge once when some claim was judged (or the judge failed)."""

    scenario: Scenario
    outcome: Outcome
    pricing: Pricing

    def spending(self) -> Spending:
        outcome, scenario = self.outcome, self.scenario
        said = max(0, len(outcome.turns) - len(scenario.script))
        user = said + (1 if outcome.ended == "user_finished" and scenario.simulated else 0)
        match outcome.decision:
            case Verdict(claims=claims) if any(not claim.checked for claim in claims):
                judge = 1
            case NoVerdict(detail=detail) if detail.startswith("judge"):
                judge = 1
            case Verdict() | NoVerdict() | Failed():
                judge = 0
        agent: Usage | None = Usage(input=0, output=0)
        for turn in outcome.turns:
            agent = turn.usage.plus(agent) if turn.usage is not None and agent is not None else None
        cost = self.pricing.cost(outcome)
        return Spending(
            calls=(user, judge, len(outcome.turns)),
            tokens=(
                PartyTokens(outcome.user_usage, user).count(),
                PartyTokens(outcome.judge_usage, judge).count(),
                PartyTokens(agent, len(outcome.turns)).count(),
            ),
            usd=(cost.user, cost.judge, cost.agent),
            spared=(
                bool(outcome.turns) and all(turn.replayed for turn in outcome.turns),
                outcome.reused is not None,
                False,
            ),
        )


class PartyTokens(msgspec.Struct, frozen=True):
    """A party's tokens in one attempt of `calls` calls to it: None when it was called and did not
    report both counts."""

    usage: Usage | None
    calls: int

    def count(self) -> int | None:
        if self.calls == 0:
            return 0
        match self.usage:
            case Usage(input=int(read), output=int(written)):
                return read + written
            case _:
                return None


class Expected(Data, frozen=True, kw_only=True):
    """One scenario's share of the run: its attempts times the median of each figure over its
    baseline attempts, by party (None where unknown: a party that reported nothing, or a scenario
    the baseline does not have)."""

    name: str
    attempts: int
    calls: tuple[float | None, ...] = (None, None, None)
    tokens: tuple[float | None, ...] = (None, None, None)
    usd: tuple[float | None, ...] = (None, None, None)
    known: bool = False
    """The baseline has attempts of this scenario."""


class ExpectedSum(msgspec.Struct, frozen=True):
    """Some expected figures added up: the known ones, and how many were unknown."""

    values: tuple[float | None, ...]

    @property
    def value(self) -> float:
        return sum(v for v in self.values if v is not None)

    def money(self) -> Money:
        known = sum(v is not None for v in self.values)
        return Money(usd=round(self.value, 12), known=known, unknown=len(self.values) - known)

    def count(self) -> str:
        """`1,234`, `≥ 1,234` when a part is unknown, `unknown` when none is known."""
        money = self.money()
        if not money.known:
            return "unknown"
        return f"{'≥ ' if money.unknown else ''}{self.value:,.0f}"


class Estimate(Data, frozen=True, kw_only=True):
    """The run's expected spending, each scenario's from the baseline run `baseline`; without a
    baseline, `why` says why there is none."""

    agent: str
    attempts: int
    scenarios: tuple[Expected, ...] = ()
    baseline: str = ""
    why: str = ""

    def summed(self, figure: str, party: int | None = None) -> ExpectedSum:
        """A figure (`calls`, `tokens`, `usd`) summed over the scenarios, of one party or all."""
        parties = range(len(PARTIES)) if party is None else (party,)
        return ExpectedSum(tuple(getattr(s, figure)[p] for s in self.scenarios for p in parties))

    def lines(self) -> tuple[str, ...]:
        """The estimate as the command prints it."""
        played = (
            Plural(len(self.scenarios), "scenario").text() + ", " + Plural(self.attempts, "attempt").text()
        )
        if self.why:
            return (
                f"convy: estimate for {self.agent!r}: {played}",
                f"convy: cannot estimate the model calls, tokens and cost: {self.why}",
            )
        lines = [
            f"convy: estimate for {self.agent!r}: {played}, from the per-scenario medians of the baseline "
            f"{self.baseline} (no request made)"
        ]
        for label, figure in (("model calls", "calls"), ("tokens", "tokens")):
            parts = (f"{party} {self.summed(figure, index).count()}" for index, party in enumerate(PARTIES))
            lines.append(f"  {label:<12} {' · '.join(parts)}")
        costs = (f"{party} {self.summed('usd', index).money().text()}" for index, party in enumerate(PARTIES))
        lines.append(f"  {'cost':<12} {self.summed('usd').money().text()} ({' · '.join(costs)})")
        new = [s.name for s in self.scenarios if not s.known]
        if new:
            lines.append(
                f"  {Plural(len(new), 'scenario').text()} not in the baseline, left unknown: {', '.join(new)}"
            )
        return tuple(lines)


class Estimating(msgspec.Struct, frozen=True):
    """A project's run, estimated from `baseline` without playing it."""

    project: Project
    baseline: StoredRun | NoBaseline

    def estimate(self) -> Estimate:
        settings = self.project.settings
        scenarios = tuple(d.scenario for d in Slice.read(settings.shard).chosen(self.project.declarations()))
        agent = self.project.agent_name()
        attempts = len(scenarios) * settings.repeat
        match self.baseline:
            case NoBaseline(why=why):
                return Estimate(
                    agent=agent,
                    attempts=attempts,
                    scenarios=tuple(Expected(name=s.name, attempts=settings.repeat) for s in scenarios),
                    why=f"{why}; the estimate is the medians of a baseline run's attempts",
                )
            case StoredRun() as stored:
                pass
        pricing = self.pricing()
        named = {s.name: s for s in scenarios}
        seen: dict[str, list[Spending]] = {s.name: [] for s in scenarios}
        for outcome in stored.outcomes():
            if outcome.scenario in named:
                seen[outcome.scenario].append(Seen(named[outcome.scenario], outcome, pricing).spending())
        return Estimate(
            agent=agent,
            attempts=attempts,
            scenarios=tuple(Medians(s.name, settings.repeat, seen[s.name]).expected() for s in scenarios),
            baseline=str(stored.folder),
        )

    def pricing(self) -> Pricing:
        """Today's prices of the run's models: the models are made (never asked) to learn their
        names; the lookup is local."""
        assembly = Assembly(self.project)
        models = assembly.models(httpx.AsyncClient(), self.project.declarations())
        book = PriceBook(self.project.settings.price_table())
        return RunPrices(self.project, models, assembly.agent()).pricing(book)


class Medians(msgspec.Struct, frozen=True):
    """A scenario's baseline attempts' spending, as its expected share of `attempts` attempts."""

    name: str
    attempts: int
    seen: list[Spending]

    def expected(self) -> Expected:
        if not self.seen:
            return Expected(name=self.name, attempts=self.attempts)
        return Expected(
            name=self.name,
            attempts=self.attempts,
            calls=self.medians([tuple(map(float, s.calls)) for s in self.seen]),
            tokens=self.medians([s.tokens for s in self.seen], paid=True),
            usd=self.medians([s.usd for s in self.seen], paid=True),
            known=True,
        )

    def medians(
        self, rows: Sequence[tuple[float | int | None, ...]], paid: bool = False
    ) -> tuple[float | None, ...]:
        """Each party's median over the attempts, times `attempts`; with `paid`, over those that
        asked it (a run that pays in full: a verdict reused or a dialogue replayed in the baseline
        counts at what asking cost there). None when some attempt's is unknown, or none asked it."""
        found: list[float | None] = []
        for party in range(len(PARTIES)):
            column = [
                row[party] for row, s in zip(rows, self.seen, strict=True) if not (paid and s.spared[party])
            ]
            known = [float(v) for v in column if v is not None]
            whole = bool(column) and len(known) == len(column)
            found.append(statistics.median(known) * self.attempts if whole else None)
        return tuple(found)
