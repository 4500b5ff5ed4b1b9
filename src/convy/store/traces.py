"""A run laid out as OpenTelemetry spans, without OpenTelemetry: one trace per attempt, which
otlp.py sends.

Each trace has its recorded `trace_id` (else one made from the run, the scenario and the index), a
root span for the attempt with each claim's decision as an event, a span per agent request (the
span id its `traceparent` carried), one span for the simulated user's model calls and one for the
judge's, with the GenAI semantic conventions (what a span is: spans.py).

An attempt line that records its agent requests (`spans`: every request sent, its span id, when,
how long, its status) gives a span for each with its real times, the model calls in the gaps
between them. An older line records whole-attempt times only (the attempt's start and seconds, each
turn's seconds), so its spans are laid out in time: the time not spent in agent requests is shared
equally between the model calls — the user's before each agent request, the judge's after the last
(decision 34)."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from convy.play.agent import Usage
from convy.play.outcome import Failed, NoVerdict, Outcome, Turn, Verdict
from convy.play.outcome import Span as Request
from convy.store.runs import StoredRun
from convy.store.spans import NANOS, GenAiTokens, Ids, Moment, SpanEvent, Status, TraceSpan, Value


class RunModels(msgspec.Struct, frozen=True, kw_only=True):
    """The run's models by name, and the agent's, as run.json records them."""

    user: str = ""
    judge: str = ""
    agent: str = ""


class AttemptTrace(msgspec.Struct, frozen=True, kw_only=True):
    """One attempt as its trace's spans."""

    outcome: Outcome
    ids: Ids
    models: RunModels
    fallback: str = ""
    """When the attempt started if its line does not say (run.json's start)."""

    def spans(self) -> tuple[TraceSpan, ...]:
        """The root, then its children: the agent requests the line recorded, with their own times,
        when it holds each turn's answered one; else the requests and model calls laid out."""
        outcome = self.outcome
        start = Moment((outcome.started, self.fallback)).nanos()
        children = self.recorded(start) if outcome.spans and self.matched() else self.laid_out(start)
        end = max([start + int(max(outcome.seconds, 0.0) * NANOS), *(span.end for span in children)])
        head = TraceSpan(
            name=f"{outcome.scenario} #{outcome.index}",
            trace_id=self.ids.trace(),
            span_id=self.ids.span("attempt"),
            start=start,
            end=end,
            attributes=self.attributes(),
            events=tuple(self.claims(end)),
            error=self.error(),
        )
        return (head, *children)

    def matched(self) -> bool:
        """Whether the recorded requests hold each turn's answered one, in order: always, as convy
        records them; a line that does not (edited by hand) is laid out as an older one."""
        sent = iter(request.span_id for request in self.outcome.spans if request.kind == "turn")
        return all(turn.span_id in sent for turn in self.outcome.turns)

    def recorded(self, start: int) -> list[TraceSpan]:
        """A span per recorded agent request, at the attempt's start + its `at`, for its `seconds`;
        the user's calls over the dialogue — from the end of the requests before the first turn
        (its session's start) to the start of its session's end, else to the end of the last request
        (of the attempt, when the judge was not asked) — and the judge's from the end of the last
        request to the attempt's end (decision 34)."""
        outcome = self.outcome
        trace, root = self.ids.trace(), self.ids.span("attempt")
        requests: list[TraceSpan] = []
        number = 1
        turns = [request.kind == "turn" for request in outcome.spans]
        for position, request in enumerate(outcome.spans):
            begun = start + int(max(request.at, 0.0) * NANOS)
            ended = begun + int(max(request.seconds, 0.0) * NANOS)
            if request.kind != "turn":
                name = "agent session start" if request.kind == "session_start" else "agent session end"
                requests.append(self.other(request, name, position, begun, ended))
                continue
            answered = outcome.turns[number - 1] if number <= len(outcome.turns) else None
            if answered is not None and answered.span_id == request.span_id:
                requests.append(self.request(answered, number, trace, root, begun, ended, request.status))
                number += 1
                continue
            again = any(turns[position + 1 :])
            name = f"agent turn {number}" + (" (sent again)" if again else "")
            requests.append(self.other(request, name, position, begun, ended, number))
        spans: list[TraceSpan] = []
        total = start + int(max(outcome.seconds, 0.0) * NANOS)
        last = max([start, *(span.end for span in requests)])
        judged = self.judged()
        if outcome.turns or outcome.user_usage is not None:
            first = next((at for at, turn in enumerate(turns) if turn), len(turns))
            began = max([start, *(span.end for span in requests[:first])])
            sent = zip(requests, outcome.spans, strict=True)
            ending = (span.start for span, request in sent if request.kind == "session_end")
            ends = next(ending, last if judged else max(last, total))
            user = self.model("user", self.models.user, outcome.user_usage, began, max(began, ends), root)
            spans.append(user)
        spans.extend(requests)
        if judged:
            judge = self.model("judge", self.models.judge, outcome.judge_usage, last, max(last, total), root)
            spans.append(judge)
        return spans

    def laid_out(self, start: int) -> list[TraceSpan]:
        """The agent requests and model calls of a line that did not record its requests: the time
        not spent in agent requests shared equally between the model calls (decision 34)."""
        outcome = self.outcome
        total = int(max(outcome.seconds, 0.0) * NANOS)
        asked = [int(max(turn.seconds, 0.0) * NANOS) for turn in outcome.turns]
        judged = self.judged()
        calls = max(len(asked), 1) + (1 if judged else 0)
        share = max(total - sum(asked), 0) // max(calls, 1)
        trace, root = self.ids.trace(), self.ids.span("attempt")
        spans: list[TraceSpan] = []
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
        return spans

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

    def claims(self, at: int) -> Iterator[SpanEvent]:
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
                    yield SpanEvent(name="claim", at=at, attributes=found)
            case _:
                return

    def request(
        self, turn: Turn, number: int, trace: str, root: str, start: int, end: int, status: int = 0
    ) -> TraceSpan:
        """The agent request that got turn `number`'s answer (the user's message in, the answer out)
        and its HTTP `status` when recorded."""
        found: dict[str, Value] = {
            "convy.turn": number,
            "input.value": turn.user,
            "output.value": turn.agent,
        }
        if self.models.agent:
            found["convy.agent"] = self.models.agent
        if status:
            found["http.response.status_code"] = status
        if turn.first is not None:
            found["convy.first_token_seconds"] = turn.first
        if turn.replayed:
            found["convy.replayed"] = True
        found.update(GenAiTokens(turn.usage).attributes())
        return TraceSpan(
            name=f"agent turn {number}",
            trace_id=trace,
            span_id=self.ids.request(turn, number),
            parent_id=root,
            kind="client",
            start=start,
            end=end,
            attributes=found,
            error=Status(status).error() if status else "",
        )

    def other(
        self, request: Request, name: str, position: int, start: int, end: int, turn: int = 0
    ) -> TraceSpan:
        """A recorded agent request (at `position`) that got no turn's answer: its session's start or
        end, or a request of turn `turn` sent again after it (a 401, 429 or 503, a lesson) or that
        failed the attempt."""
        found: dict[str, Value] = {"convy.turn": turn} if turn else {}
        if self.models.agent:
            found["convy.agent"] = self.models.agent
        if request.status:
            found["http.response.status_code"] = request.status
        return TraceSpan(
            name=name,
            trace_id=self.ids.trace(),
            span_id=self.ids.sent(request, position),
            parent_id=self.ids.span("attempt"),
            kind="client",
            start=start,
            end=end,
            attributes=found,
            error=Status(request.status).error(),
        )

    def model(self, role: str, name: str, usage: Usage | None, start: int, end: int, root: str) -> TraceSpan:
        """The simulated user's or the judge's model calls of the attempt, as one GenAI chat span
        (their tokens are recorded per attempt, not per call)."""
        found: dict[str, Value] = {"gen_ai.operation.name": "chat", "convy.role": role}
        if name:
            found["gen_ai.request.model"] = name
        found.update(GenAiTokens(usage).attributes())
        return TraceSpan(
            name=f"chat {name}".strip() if name else f"chat ({role})",
            trace_id=self.ids.trace(),
            span_id=self.ids.span(role),
            parent_id=root,
            kind="client",
            start=start,
            end=end,
            attributes=found,
        )


class RunTraces(msgspec.Struct, frozen=True):
    """A stored run as its attempts' traces, one attempt at a time."""

    run: StoredRun

    def attempts(self) -> Iterator[AttemptTrace]:
        spec = self.run.file.spec
        models = RunModels(user=spec.user_model, judge=spec.judge_model or spec.user_model, agent=spec.agent)
        for outcome in self.run.outcomes():
            ids = Ids(
                run=self.run.key, scenario=outcome.scenario, index=outcome.index, trace_id=outcome.trace_id
            )
            yield AttemptTrace(outcome=outcome, ids=ids, models=models, fallback=self.run.file.started)
