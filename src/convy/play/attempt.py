"""How one attempt of a scenario is played: the simulated user (or the scenario's script) talks with
the agent, then the judge decides the claims and the checks are made — and the Outcome it leaves,
whatever fails on the way."""

from __future__ import annotations

import datetime
import secrets
import time
from typing import Literal

import msgspec

from convy.play.agent import Agent, AgentFailure, Conversation, SessionNotEnded, Usage
from convy.play.busy import GaveUp
from convy.play.checks import Inspection
from convy.play.dialog import Finished, Judge, Said, SimulatedUser
from convy.play.model import Model, ModelFailure
from convy.play.outcome import (
    STAMP,
    ClaimResult,
    Decision,
    Failed,
    NoVerdict,
    Outcome,
    Saved,
    Turn,
    Verdict,
)
from convy.play.replay import UNPAIRED, Pairing, User
from convy.play.reuse import Source, Verdicts
from convy.play.trace import TraceContext
from convy.project.scenario import Scenario


class Spent(msgspec.Struct):
    """Tokens added up over an attempt's requests; a count nobody reported stays unknown."""

    input: int | None = None
    output: int | None = None
    seen: bool = False

    def add(self, usage: Usage | None) -> None:
        if usage is None:
            return
        self.seen = True
        if usage.input is not None:
            self.input = (self.input or 0) + usage.input
        if usage.output is not None:
            self.output = (self.output or 0) + usage.output

    def usage(self) -> Usage | None:
        return Usage(input=self.input, output=self.output) if self.seen else None


class Unjudged(msgspec.Struct, frozen=True):
    """A model failure of the simulated user's (`role` user) or the judge's model, as the attempt's
    NoVerdict: its reason names the role and the kind (`user_timeout`, `user_failure`,
    `judge_timeout`, `judge_failure`, `judge_unreadable`, `context_exceeded`, `model_busy`), its
    detail starts with the role (`user: `, `judge: `), and it keeps the HTTP status, the service's
    own message and an unreadable reply as it came."""

    role: Literal["user", "judge"]
    failure: ModelFailure

    @property
    def reason(self) -> str:
        match self.failure.kind:
            case "busy":
                return "model_busy"
            case "context":
                return "context_exceeded"
            case "timeout":
                return f"{self.role}_timeout"
            case "unreadable" if self.role == "judge":
                return "judge_unreadable"
            case _:
                return f"{self.role}_failure"

    def decision(self) -> NoVerdict:
        return NoVerdict(
            reason=self.reason,
            detail=f"{self.role}: {self.failure}",
            status=self.failure.status,
            message=self.failure.message,
            raw=self.failure.raw,
        )


SETUP_STATUSES = (401, 403, 404, 405)
"""Answers that refuse a request as such — its credentials, its address, its method — so the
agent's logic never ran."""


class Delivery(msgspec.Struct, frozen=True):
    """An agent failure as the attempt's Failed decision. A failure before any agent answer that
    means the request never reached the agent's logic — no connection made (refused, a name not
    resolved, TLS failed), HTTP 401,
    403, 404 or 405 (a session start's too) — is `not_delivered`: a setup mistake, not the
    agent's behaviour, and an attempt `convy resume` plays again. Its detail starts with the
    original reason."""

    failure: AgentFailure
    reached: bool

    @property
    def undelivered(self) -> bool:
        failure = self.failure
        if self.reached:
            return False
        if failure.reason == "connection":
            return not failure.reached
        if failure.reason == "session_failed" and (not failure.status or failure.status in SETUP_STATUSES):
            return True
        return failure.reason in {f"http_{status}" for status in SETUP_STATUSES}

    def decision(self) -> Failed:
        failure = self.failure
        if not self.undelivered:
            return Failed(
                reason=failure.reason,
                detail=failure.detail,
                status=failure.status,
                message=failure.message,
                raw=failure.raw,
            )
        return Failed(
            reason="not_delivered",
            detail=f"{failure.reason}: {failure.detail}",
            status=failure.status,
            message=failure.message,
        )


class Attempt(msgspec.Struct, frozen=True, kw_only=True):
    """The index-th attempt of a scenario, with the most agent answers it may have."""

    scenario: Scenario
    index: int
    max_turns: int
    run: str = ""

    def conversation(self) -> str:
        """A new conversation id for one play of this attempt: the run, the scenario, the index and
        a random part, so that playing the attempt again (a resume) opens a conversation the agent
        has never seen."""
        return f"{self.run}-{self.scenario.name}-{self.index}-{secrets.token_hex(4)}"

    async def outcome(
        self,
        agent: Agent,
        user_model: Model,
        judge: Judge,
        pairing: Pairing = UNPAIRED,
        verdicts: Verdicts | None = None,
    ) -> Outcome:
        """Play the attempt. An agent failure ends it Failed without asking the judge; a model
        failure or a service busy beyond patience ends it without verdict. With a `pairing` (a
        baseline attempt, `replay: user`) its user is replayed while the agent answers as there;
        a transcript `verdicts` knows takes that decision without a judge call (the caller tells
        `verdicts` when the attempt ended)."""
        started = datetime.datetime.now(datetime.UTC).strftime(STAMP)
        clock = time.monotonic()
        turns: list[Turn] = []
        spent = Spent()
        conversation = self.conversation()
        warnings: list[str] = []
        trace = TraceContext.new()
        with trace.carried():
            ended, decision = await self._dialogue(
                agent,
                pairing.user(
                    SimulatedUser(model=user_model, scenario=self.scenario, max_turns=self.max_turns)
                ),
                conversation,
                turns,
                spent,
                warnings,
            )
        trace_id, spans = trace.recorded()
        judged = Spent()
        if decision is None and not turns:
            decision = NoVerdict(
                reason="no_dialogue", detail="the simulated user finished before the agent was asked anything"
            )
        source: Source | None = None
        if decision is None:
            source = await (verdicts or Verdicts()).found(self.scenario.name, self.index, tuple(turns))
        if decision is None and source is not None:
            decision = self.reused(source, tuple(turns))
            judged.add(Usage(input=0, output=0))
        elif decision is None:
            try:
                decision = await self.verdict(judge, tuple(turns), judged)
            except ModelFailure as error:
                judged.add(error.usage)
                decision = Unjudged(role="judge", failure=error).decision()
        reused = source.reused if source is not None else None
        return Outcome(
            scenario=self.scenario.name,
            index=self.index,
            fingerprint=self.scenario.fingerprint(),
            turns=tuple(turns),
            seconds=round(time.monotonic() - clock, 4),
            decision=decision,
            ended=ended,
            judge_usage=judged.usage(),
            user_usage=spent.usage(),
            started=started,
            conversation=conversation,
            warnings=tuple(warnings),
            trace_id=trace_id,
            spans=spans,
            reused=reused,
            saved=self.saved(pairing, tuple(turns), ended, source),
        )

    def reused(self, source: Source, turns: tuple[Turn, ...]) -> Verdict:
        """The decision of `source`, a judged attempt with the same transcript: its judge's
        decisions on the claims, then the checks made on this dialogue (the same, as they read only
        what was said); it holds when every one passes."""
        results = (*source.claims, *Inspection(turns).results(self.scenario.checks))
        return Verdict(holds=all(result.passed for result in results), claims=results)

    def saved(
        self, pairing: Pairing, turns: tuple[Turn, ...], ended: str, source: Source | None
    ) -> Saved | None:
        """What replaying and reusing spared this attempt; None when it did neither."""
        if source is None and not any(turn.replayed for turn in turns):
            return None
        user = pairing.saved(self.scenario, turns, ended)
        return Saved(user=user, judge=source.judge if source is not None else 0.0)

    async def judged_again(self, judge: Judge, before: Outcome) -> Outcome:
        """`before` — an attempt of an earlier run of this scenario, whose dialogue is the same —
        judged again with the scenario's claims and checks as they are now: its transcript as it
        was, never the agent. One the agent failed, or whose dialogue did not finish (the user
        model failed, a service stayed busy), keeps its decision; either way it takes today's
        fingerprint and the judge tokens spent now."""
        fingerprint = self.scenario.fingerprint()
        match before.decision:
            case Verdict():
                pass
            case NoVerdict(reason=reason, detail=detail) if reason.startswith("judge") or detail.startswith(
                "judge"
            ):
                pass
            case _:
                return msgspec.structs.replace(before, fingerprint=fingerprint, judge_usage=None)
        judged = Spent()
        decision: Decision
        try:
            decision = await self.verdict(judge, before.turns, judged)
        except ModelFailure as error:
            judged.add(error.usage)
            decision = Unjudged(role="judge", failure=error).decision()
        return msgspec.structs.replace(
            before, fingerprint=fingerprint, decision=decision, judge_usage=judged.usage()
        )

    async def verdict(self, judge: Judge, turns: tuple[Turn, ...], judged: Spent) -> Verdict:
        """The judge's decisions on the claims (an attack without claims: its category's; no request
        when there are none), then the checks' results; the attempt holds when every one passes."""
        claims: tuple[ClaimResult, ...] = ()
        scenario = self.scenario.armed()
        if scenario.claims:
            decided = await judge.decide(scenario.claims, turns)
            judged.add(decided.usage)
            claims = decided.verdict.claims
        results = (*claims, *Inspection(turns).results(self.scenario.checks))
        return Verdict(holds=all(result.passed for result in results), claims=results)

    async def _dialogue(
        self,
        agent: Agent,
        user: User,
        conversation_id: str,
        turns: list[Turn],
        spent: Spent,
        warnings: list[str],
    ) -> tuple[str, Decision | None]:
        """The dialogue, appended to `turns`; how it ended, and the decision it forced if any. A
        session the agent could not end is a warning, appended to `warnings`."""
        ended = ""
        try:
            async with agent.conversation(conversation_id) as conversation:
                ended = await self._turns(conversation, user, turns, spent)
            return ended, None
        except SessionNotEnded as problem:
            warnings.append(str(problem))
            return ended, None
        except AgentFailure as failure:
            return "agent_failed", Delivery(failure, reached=bool(turns)).decision()
        except GaveUp as busy:
            return "agent_busy", NoVerdict(
                reason="agent_busy", detail=str(busy), status=busy.busy.status, message=busy.busy.message
            )
        except ModelFailure as error:
            spent.add(error.usage)
            return "model_failed", Unjudged(role="user", failure=error).decision()
        except Exception as error:  # the agent's own code: a bug there must not stop the run
            return "agent_failed", Failed(reason="agent_error", detail=f"{type(error).__name__}: {error}")

    async def _turns(self, conversation: Conversation, user: User, turns: list[Turn], spent: Spent) -> str:
        """The turns of an open conversation, appended to `turns`; how the dialogue ended."""
        move = await user.first()
        while True:
            spent.add(move.usage)
            match move:
                case Finished():
                    return "user_finished"
                case Said(text=text, replayed=replayed):
                    said = text
            clock = time.monotonic()
            trace = TraceContext.current()
            sent = len(trace.spans)
            answer = await conversation.reply(said)
            turns.append(
                Turn(
                    user=said,
                    agent=answer.text,
                    seconds=round(time.monotonic() - clock, 4),
                    usage=answer.usage,
                    steps=answer.steps,
                    first=answer.first,
                    span_id=trace.since(sent),
                    replayed=replayed,
                )
            )
            if len(turns) >= self.max_turns:
                return "max_turns"
            move = await user.next(tuple(turns))
