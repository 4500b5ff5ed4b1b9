"""What a run's summary is made of: how a time or token figure spread over the attempts, the
attempts that ended for one reason, whose fault the attempts that did not hold are, the failing
claims, each scenario summed up, what re-judging a baseline took and what reused verdicts and
replayed turns spared."""

from __future__ import annotations

import msgspec

from convy.compare.money import Money
from convy.compare.statistics import Rate, Share, Tally, Unknown
from convy.data import Data


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


class Party(Data, frozen=True, kw_only=True):
    """The attempts that did not hold by one party's doing: how many, the commonest reason among
    them, and its commonest message (for the agent's failed claims: the first failed claim's reason,
    the judge's or, `check`, a deterministic check's)."""

    party: str
    count: int
    reason: str
    message: str = ""
    check: bool = False


class FailingClaim(Data, frozen=True, kw_only=True):
    """A claim that did not pass in some attempts, with the judge's first reason (and how its votes
    split there); or (`check`) one of
    the scenario's deterministic checks, with its first reason."""

    claim: str
    failed: int
    judged: int
    reason: str
    line: int = 0
    check: bool = False
    split: str = ""
    """How the judge's votes went on the attempt the reason is from ("2 of 3 votes"); "" when one
    call decided it."""


UNHELD = 3
"""The attempts that did not hold a scenario's summary names (for their trace links)."""


class Traced(Data, frozen=True, kw_only=True):
    """An attempt as its trace link names it: its index, its W3C trace id ("" none sent) and the
    conversation id the agent saw."""

    index: int
    trace_id: str = ""
    conversation: str = ""


class Rejudging(Data, frozen=True, kw_only=True):
    """What re-judging a baseline took: the scenarios and attempts judged again with today's claims,
    checks and judge, and the judge's tokens for it (None: unknown, no call reported them)."""

    scenarios: int = 0
    attempts: int = 0
    judge_tokens: int | None = None


class Savings(Data, frozen=True, kw_only=True):
    """What a run did not pay because it paid once: verdicts reused (no judge call), turns whose
    user message was replayed from the baseline (no user-model call), and what those calls cost
    where they were first paid (USD; `unknown` when part of it is not known, so it is at least
    `money`)."""

    verdicts: int = 0
    turns: int = 0
    money: float = 0.0
    unknown: bool = False


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
    failures: tuple[Reason, ...] = ()
    """The commonest reason the agent failed its attempts, with the service's words (empty: none)."""
    seconds: Spread = Spread()
    rejudged: bool = False
    """Its attempts (a baseline's) were judged again with today's claims, checks and judge."""
    source: str = ""
    """Where the scenario was drafted from (its `source` key); "" written by hand."""
    first: Tally = msgspec.field(default_factory=lambda: Tally(held=0, judged=0))
    """The attempts of the first round (index < repeat): what decided whether more were played."""
    unheld: tuple[Traced, ...] = ()
    """The first attempts (at most UNHELD) that did not hold — failed by the agent or a claim —
    as their trace links name them."""
    cost: Money = Money()
    """What its attempts cost."""
    stages: tuple[Tally, ...] = ()
    """In a staged run, each stage's attempts up to the last it reached (decision 28)."""
    against: Tally | None = None
    """In a staged run, the baseline's tally its stages were decided against (None: played plainly)."""
    category: str = ""
    """An attack scenario's category in the red-team catalogue; "" not an attack."""
