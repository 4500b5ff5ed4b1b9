"""Traces: a run laid out as OpenTelemetry spans, without OpenTelemetry — one trace per attempt
(its recorded `trace_id`, else one made from the run, the scenario and the index), a root span for
the attempt with each claim's decision as an event, a span per agent request (the span id its
`traceparent` carried), one span for the simulated user's model calls and one for the judge's, with
the GenAI semantic conventions. otlp.py sends them; this module only says what they are.

Only whole-attempt times are recorded (the attempt's start and seconds, each turn's seconds), so the
spans are laid out in time: the time not spent in agent requests is shared equally between the model
calls — the user's before each agent request, the judge's after the last (decision 34)."""

from __future__ import annotations

import calendar
import hashlib
import re
import time
from collections.abc import Iterator

import msgspec

from convy.play.agent import Usage
from convy.play.outcome import STAMP, Failed, NoVerdict, Outcome, Turn, Verdict
from convy.store.runs import StoredRun

Value = str | bool | int | float
"""An attribute's value, as OTLP carries it."""

TRACE_ID = re.compile(r"[0-9a-f]{32}")
SPAN_ID = re.compile(r"[0-9a-f]{16}")
NANOS = 1_000_000_000


class Event(msgspec.Struct, frozen=True, kw_only=True):
    """Something that happened at one moment of a span: a claim's decision."""

    name: str
    at: int
    """Nanoseconds since the epoch."""
    attributes: dict[str, Value]


class Span(msgspec.Struct, frozen=True, kw_only=True):
    """One span of an attempt's trace: ids as lowercase hex, times in nanoseconds since the epoch."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str = ""
    """"" for the attempt's root."""
    kind: str = "internal"
    """`internal` or `client` (a request convy sent)."""
    start: int
    end: int
    attributes: dict[str, Value]
    events: tuple[Event, ...] = ()
    error: str = ""
    """Why the span is an error ("" when it went well)."""


class Ids(msgspec.Struct, frozen=True, kw_only=True):
    """The ids of one attempt's spans: the recorded ones where there are any, else made from the
    run's key, the scenario and the index (sha256), so the same attempt sent twice keeps its ids.
    The one place an agent request's span id is looked up."""

    run: str
    scenario: str
    index: int
    trace_id: str = ""

    def made(self, part: str, length: int) -> str:
        key = f"{self.run}\n{self.scenario}\n{self.index}\n{part}".encode()
        return hashlib.sha256(key).hexdigest()[:length]

    def trace(self) -> str:
        given = self.trace_id
        return given if TRACE_ID.fullmatch(given) and set(given) != {"0"} else self.made("trace", 32)

    def span(self, part: str) -> str:
        return self.made(part, 16)

    def request(self, turn: Turn, number: int) -> str:
        """The span id of the agent request that got turn `number`'s answer."""
        given = turn.span_id
        return given if SPAN_ID.fullmatch(given) and set(given) != {"0"} else self.span(f"turn {number}")


class Models(msgspec.Struct, frozen=True, kw_only=True):
    """The run's models by name, and the agent's, as run.json records them."""

    user: str = ""
    judge: str = ""
    agent: str = ""


class AttemptTrace(msgspec.Struct, frozen=True, kw_only=True):
    """One attempt as its trace's spans."""

    outcome: Outcome
    ids: Ids
    models: Models
    fallback: str = ""
    """When the attempt started if its line does not say (run.json's start)."""

    def spans(self) -> tuple[Span, ...]:
        outcome = self.outcome
        start = Moment((outcome.started, self.fallback)).nanos()
        total = int(max(outcome.seconds, 0.0) * NANOS)
        asked = [int(max(turn.seconds, 0.0) * NANOS) for turn in outcome.turns]
        judged = self.judged()
        calls = max(len(asked), 1) + (1 if judged else 0)
        share = max(total - sum(asked), 0) // max(calls, 1)
        trace, root = self.ids.trace(), self.ids.span("attempt")
        spans: list[Span] = []
        at = start
        for number, (turn, took) in enumerate(zip(outcome.turns, asked, strict=True), start=1):
            at += share
            spans.append(self.request(turn, number, trace, root, at, at + took))
            at += took
        dialogue = at
        if not outcome.turns and outcome.user_usage is not None:
            dialogue = start + total // calls if judged else start + total  # the user's calls alone
        if outcome.turns or outcome.user_usage is not None:
            spans.insert(0, self.model("user", self.models.user, outcome.user_usage, start, dialogue, root))
        end = max(start + total, dialogue)
        if judged:
            spans.append(self.model("judge", self.models.judge, outcome.judge_usage, dialogue, end, root))
        head = Span(
            name=f"{outcome.scenario} #{outcome.index}",
            trace_id=trace,
            span_id=root,
            start=start,
            end=end,
            attributes=self.attributes(),
            events=tuple(self.claims(end)),
            error=self.error(),
        )
        return (head, *spans)

    def judged(self) -> bool:
        """Whether the judge was asked: not for a reused verdict; else when its tokens were recorded,
        it failed, or it decided a claim."""
        match self.outcome.decision:
            case _ if self.outcome.reused is not None:
                return False
            case _ if self.outcome.judge_usage is not None:
                return True
            case NoVerdict(reason=reason):
                return reason.startswith("judge")
            case Verdict(claims=claims):
                return any(not claim.checked for claim in claims)
            case _:
                return False

    def attributes(self) -> dict[str, Value]:
        outcome = self.outcome
        found: dict[str, Value] = {
            "convy.scenario": outcome.scenario,
            "convy.index": outcome.index,
            "convy.fingerprint": outcome.fingerprint,
            "convy.turns": len(outcome.turns),
            "convy.seconds": outcome.seconds,
        }
        if self.models.agent:
            found["convy.agent"] = self.models.agent
        if outcome.conversation:
            found["convy.conversation"] = outcome.conversation
        match outcome.decision:
            case Verdict(holds=holds):
                found.update({"convy.decision": "verdict", "convy.holds": holds})
                if not holds:
                    found["convy.reason"] = "claims_failed"
            case Failed() | NoVerdict() as undecided:
                kind = "failed" if isinstance(undecided, Failed) else "no_verdict"
                found.update({"convy.decision": kind, "convy.holds": False, "convy.reason": undecided.reason})
                if undecided.detail:
                    found["convy.detail"] = undecided.detail
                if undecided.status:
                    found["convy.status"] = undecided.status
        if outcome.reused is not None:
            found["convy.reused"] = f"{outcome.reused.run} {outcome.reused.scenario} #{outcome.reused.index}"
        return found

    def error(self) -> str:
        match self.outcome.decision:
            case Verdict(holds=False, claims=claims):
                failed = sum(1 for claim in claims if not claim.passed)
                return f"{failed} of {len(claims)} claims failed"
            case Failed(reason=reason) | NoVerdict(reason=reason):
                return reason
            case _:
                return ""

    def claims(self, at: int) -> Iterator[Event]:
        match self.outcome.decision:
            case Verdict(claims=claims):
                for claim in claims:
                    found: dict[str, Value] = {
                        "convy.claim": claim.claim,
                        "convy.claim.pass": claim.passed,
                        "convy.claim.reason": claim.reason,
                        "convy.claim.check": claim.checked,
                    }
                    if claim.grade is not None:
                        found["convy.claim.grade"] = claim.grade
                    yield Event(name="claim", at=at, attributes=found)
            case _:
                return

    def request(self, turn: Turn, number: int, trace: str, root: str, start: int, end: int) -> Span:
        """The agent request that got turn `number`'s answer (the user's message in, the answer out)."""
        found: dict[str, Value] = {
            "convy.turn": number,
            "input.value": turn.user,
            "output.value": turn.agent,
        }
        if self.models.agent:
            found["convy.agent"] = self.models.agent
        if turn.first is not None:
            found["convy.first_token_seconds"] = turn.first
        if turn.replayed:
            found["convy.replayed"] = True
        found.update(Tokens(turn.usage).attributes())
        return Span(
            name=f"agent turn {number}",
            trace_id=trace,
            span_id=self.ids.request(turn, number),
            parent_id=root,
            kind="client",
            start=start,
            end=end,
            attributes=found,
        )

    def model(self, role: str, name: str, usage: Usage | None, start: int, end: int, root: str) -> Span:
        """The simulated user's or the judge's model calls of the attempt, as one GenAI chat span
        (their tokens are recorded per attempt, not per call)."""
        found: dict[str, Value] = {"gen_ai.operation.name": "chat", "convy.role": role}
        if name:
            found["gen_ai.request.model"] = name
        found.update(Tokens(usage).attributes())
        return Span(
            name=f"chat {name}".strip() if name else f"chat ({role})",
            trace_id=self.ids.trace(),
            span_id=self.ids.span(role),
            parent_id=root,
            kind="client",
            start=start,
            end=end,
            attributes=found,
        )


class Tokens(msgspec.Struct, frozen=True):
    """A Usage as GenAI attributes: a count nobody reported is left out, never 0."""

    usage: Usage | None

    def attributes(self) -> dict[str, Value]:
        found: dict[str, Value] = {}
        if self.usage is not None and self.usage.input is not None:
            found["gen_ai.usage.input_tokens"] = self.usage.input
        if self.usage is not None and self.usage.output is not None:
            found["gen_ai.usage.output_tokens"] = self.usage.output
        return found


class Moment(msgspec.Struct, frozen=True):
    """A moment written as STAMP (UTC), in nanoseconds since the epoch; the first of `texts` that
    reads (an attempt's start, else its run's), else the epoch."""

    texts: tuple[str, ...]

    def nanos(self) -> int:
        for text in self.texts:
            try:
                return calendar.timegm(time.strptime(text, STAMP)) * NANOS
            except ValueError:
                continue
        return 0


class RunTraces(msgspec.Struct, frozen=True):
    """A stored run as its attempts' traces, one attempt at a time."""

    run: StoredRun

    def attempts(self) -> Iterator[AttemptTrace]:
        spec = self.run.file.spec
        models = Models(user=spec.user_model, judge=spec.judge_model or spec.user_model, agent=spec.agent)
        for outcome in self.run.outcomes():
            ids = Ids(
                run=self.run.key, scenario=outcome.scenario, index=outcome.index, trace_id=outcome.trace_id
            )
            yield AttemptTrace(outcome=outcome, ids=ids, models=models, fallback=self.run.file.started)
