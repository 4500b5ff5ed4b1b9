"""What one attempt of a scenario left, one line of attempts.jsonl: its turns and its decision — a
verdict with one result per claim, a failure of the agent, or no verdict (the simulator, the judge
or the infrastructure failed)."""

from __future__ import annotations

from typing import Literal

import msgspec

from convy.data import Data, Tagged
from convy.play.agent import Step, Usage

STAMP = "%Y-%m-%dT%H:%M:%SZ"
"""How a moment is written (UTC): an attempt's start, run.json's times."""


class Turn(Data, frozen=True, kw_only=True):
    """The user's message and the agent's answer to it."""

    user: str
    agent: str
    seconds: float
    usage: Usage | None = None
    steps: tuple[Step, ...] = ()
    first: float | None = None
    """Seconds from sending to the first piece of a streamed answer's text (time to first token);
    None when the answer was not streamed."""
    replayed: bool = False
    """The user's message was the baseline attempt's, not a new user-model call (`replay: user`)."""
    span_id: str = ""
    """The span id (16 hex) sent in the `traceparent` of the request that got this answer; "" when
    trace context was off or the agent is not a declarative HTTP agent."""


SpanKind = Literal["session_start", "turn", "session_end"]
"""What an agent request of an attempt was for: its session's start, a turn (one sent again — after
a 429, a 401 or a lesson learned — is a turn request of its own), its session's end."""


class Span(Data, frozen=True, kw_only=True):
    """One request of an attempt to the agent, as its `traceparent` named it: the span id (16 hex)
    sent, what it was for, when it was sent (seconds from the attempt's start), how long until its
    answer was read or it failed, and the HTTP status of the answer (0: none came)."""

    span_id: str
    kind: SpanKind
    at: float
    seconds: float
    status: int = 0


class Cost(Data, frozen=True, kw_only=True):
    """What an attempt cost in USD, by whose requests: the simulated user's, the judge's, the
    agent's (only when it reports tokens and its model has a known price). None is unknown, never
    $0."""

    user: float | None = None
    judge: float | None = None
    agent: float | None = None


class Reused(Data, frozen=True, kw_only=True):
    """The attempt whose decision this attempt took without a judge call: the same transcript,
    claims, checks and judge model (a baseline attempt, or an earlier one of the same run)."""

    run: str
    scenario: str
    index: int


class Saved(Data, frozen=True, kw_only=True):
    """What an attempt did not pay because it paid once (USD): the user-model calls its replayed
    turns spared (`user`) and the judge call its reused verdict spared (`judge`), each the share of
    what the attempt they came from paid for them; None is unknown, 0 nothing spared."""

    user: float | None = 0.0
    judge: float | None = 0.0


class Vote(Data, frozen=True, kw_only=True):
    """One judge call's decision on a claim, with the judge that made it (its model's name)."""

    judge: str
    passed: bool = msgspec.field(name="pass")
    grade: str | None = None


class ClaimResult(Data, frozen=True, kw_only=True):
    """The judge's decision on one claim, with its one-sentence reason, or (`check`) the result of
    one of the scenario's deterministic checks (play/checks.py), decided without a model."""

    claim: str
    passed: bool = msgspec.field(name="pass")
    grade: str | None = None
    reason: str = ""
    check: bool | msgspec.UnsetType = msgspec.UNSET
    """True for a check's result; left out of a judge's decision, whose line stays as it was."""
    votes: tuple[Vote, ...] | msgspec.UnsetType = msgspec.UNSET
    """Each judge call's decision on the claim when the judge votes (`judge-votes`, `judge-panel`;
    the majority is `pass`); left out for a single call, and of a check."""

    @property
    def checked(self) -> bool:
        """Whether a deterministic check decided this, not the judge."""
        return self.check is True

    @property
    def cast(self) -> tuple[Vote, ...]:
        """The votes cast on the claim; empty when one call decided it."""
        return () if isinstance(self.votes, msgspec.UnsetType) else self.votes

    @property
    def split(self) -> str:
        """How the votes went, from the decision's side: "2 of 3 votes"; "" without votes."""
        cast = self.cast
        if not cast:
            return ""
        agreeing = sum(vote.passed == self.passed for vote in cast)
        return f"{agreeing} of {len(cast)} votes"


class Verdict(Tagged, frozen=True, kw_only=True, tag="verdict"):
    """The judge decided every claim; the attempt holds when each passed."""

    holds: bool
    claims: tuple[ClaimResult, ...]


class Failed(Tagged, frozen=True, kw_only=True, tag="failed"):
    """The agent failed (`http_500`, `timeout`, `bad_answer`, `connection`, `agent_error`...):
    counts as not holding."""

    reason: str
    detail: str = ""
    status: int = 0
    """The HTTP status of the answer that failed the turn; 0 where there was none."""
    message: str = ""
    """The agent's own words: the error message of its answer (one line, secrets masked)."""
    raw: str = ""
    """A `bad_answer`'s answer as it came (its first 2,000 characters, secrets masked); "" else,
    and in folders written before it was kept."""


class NoVerdict(Tagged, frozen=True, kw_only=True, tag="no_verdict"):
    """No decision for reasons not the agent's, by role and kind (`user_timeout`, `user_failure`,
    `judge_timeout`, `judge_failure`, `judge_unreadable`, `context_exceeded`, `model_busy`,
    `agent_busy`, `internal_error`, `no_dialogue` (the user finished before the agent was asked
    anything); older folders' `model_failure`): left out of the pass rate,
    counted toward max-no-verdict. A model failure's `detail` starts with `user: ` or `judge: `."""

    reason: str
    detail: str = ""
    status: int = 0
    """The HTTP status of the model's (or busy agent's) last answer; 0 where there was none."""
    message: str = ""
    """The model's or service's own words: the error message of its answer (one line, masked)."""
    raw: str = ""
    """An unreadable judge reply as it came (at most 2,000 characters)."""


Decision = Verdict | Failed | NoVerdict


class Outcome(Data, frozen=True, kw_only=True):
    """One attempt of one scenario: the line attempts.jsonl keeps for it."""

    scenario: str
    index: int
    fingerprint: str
    turns: tuple[Turn, ...]
    seconds: float
    decision: Decision
    ended: str = ""
    judge_usage: Usage | None = None
    user_usage: Usage | None = None
    started: str = ""
    conversation: str = ""
    """The conversation id the agent saw (`$conversation`): new each time an attempt is played, so a
    resumed attempt never continues the conversation of an interrupted one."""
    warnings: tuple[str, ...] = ()
    """What went wrong without failing the attempt (the agent's session could not be ended)."""
    cost: Cost | None = None
    """What the attempt cost in USD; None in folders written before prices were known."""
    reused: Reused | None = None
    """The attempt whose verdict this one reused (no judge call); None when judged afresh."""
    saved: Saved | None = None
    """What replayed turns and a reused verdict spared; None when nothing was replayed or reused."""
    trace_id: str = ""
    """The W3C trace id (32 hex) of the attempt: every agent request of it carried it in its
    `traceparent`; "" when trace context was off."""
    spans: tuple[Span, ...] = ()
    """Every agent request of the attempt that carried the trace id, in the order sent: its span id
    and what it was for (a turn's answered request is also its Turn's span_id)."""
