"""A whole run against a misbehaving agent: each fault lands on its attempt, the run goes on, the
folder ends finished, and only refusals are retried."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
from pathlib import Path
from typing import Any

import httpx
import msgspec

from convy.conduct.run import Run
from convy.play.model import Models, OpenAiModel
from convy.play.outcome import Failed, NoVerdict, Outcome, Verdict
from convy.play.wire.agent import JsonAgent
from convy.play.wire.spec import AgentSpec
from convy.project.document import Declaration
from convy.project.scenario import Scenario
from convy.store.runfile import Limits, Provenance
from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.nothing import _Nothing


def decided(request: dict[str, Any]) -> str:
    if request.get("response_format"):
        return json.dumps({"decisions": [{"pass": True, "reason": "it answered"}]})
    return "FINISHED"


def played(
    url: str, tmp_path: Path, attempts: int = 2, patience: float = 5.0, timeout: float = 5.0
) -> tuple[Outcome, ...]:
    scenario = msgspec.convert(
        {"name": "s", "user": "a user", "opening": "hello", "claims": ["The agent answers."]}, Scenario
    )
    spec = msgspec.convert(
        {"url": url, "body": {"messages": "$messages", "session": "$conversation"}}, AgentSpec
    )
    agent = JsonAgent(spec, timeout, spec.tls.context(tmp_path))
    limits = Limits(concurrency=2, turn_timeout=timeout, patience=patience)

    async def play(models_url: str) -> tuple[Outcome, ...]:
        async with httpx.AsyncClient() as client:
            model = OpenAiModel(url=models_url, key="k", name="m", client=client)
            models = Models(user=model, judge=model)
            run = Run.planned(
                folder=tmp_path / "run",
                agent="agent",
                declarations=(Declaration(scenario=scenario, file="s.yaml", line=1, claim_lines=(4,)),),
                repeat=attempts,
                models=models,
                limits=limits,
                provenance=Provenance(),
            )
            await run.play(agent, models, _Nothing())
            assert run.journal.header().status == "finished"
            return tuple(run.journal.outcomes())

    with ModelServer(decided) as models:
        return asyncio.run(play(models.url))


def test_a_429_with_retry_after_is_retried_and_the_agent_processes_the_message_once(tmp_path: Path) -> None:
    with AgentServer() as agent:
        outcomes = played(f"{agent.url}/retry-after/1", tmp_path)
        refused = [r for r in agent.requests if r.status == 429]
        processed = agent.processed["hello"]
    assert all(isinstance(o.decision, Verdict) and o.decision.holds for o in outcomes)
    assert len(refused) == 2 and processed == 2, "each conversation's message is processed exactly once"


def test_a_503_beyond_patience_is_no_verdict_agent_busy(tmp_path: Path) -> None:
    with AgentServer() as agent:
        outcomes = played(f"{agent.url}/status/503", tmp_path, patience=0.5)
    # how long each attempt waited depends on the machine's load: only what it says is compared
    assert [(o.decision.reason, o.decision.status, o.decision.message) for o in outcomes] == [  # type: ignore[union-attr]
        ("agent_busy", 503, "status 503")
    ] * 2
    assert all(isinstance(o.decision, NoVerdict) for o in outcomes)
    assert all("gave up after waiting" in o.decision.detail for o in outcomes)  # type: ignore[union-attr]


def test_an_agent_s_error_answer_keeps_its_status_and_its_own_words(tmp_path: Path) -> None:
    with AgentServer() as agent:
        outcomes = played(f"{agent.url}/litellm-400", tmp_path, attempts=1)
    failed = outcomes[0].decision
    assert isinstance(failed, Failed) and failed.reason == "http_400" and failed.status == 400
    assert failed.message.startswith("Invalid model name passed in model=None.")
    assert "Invalid model name" in failed.detail


def test_server_errors_fail_the_attempt_without_a_retry_and_the_run_goes_on(tmp_path: Path) -> None:
    for code in (500, 502, 504):
        with AgentServer() as agent:
            outcomes = played(f"{agent.url}/status/{code}", tmp_path / str(code), attempts=3)
            sent = len(agent.requests)
        assert [o.decision.reason for o in outcomes if isinstance(o.decision, Failed)] == [f"http_{code}"] * 3
        assert sent == 3, "a server error is never retried"


def test_a_read_timeout_and_a_refused_connection_fail_the_attempt(tmp_path: Path) -> None:
    with AgentServer(slow=3.0) as agent:
        slow = played(f"{agent.url}/slow", tmp_path / "slow", attempts=1, timeout=0.5)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    refused = played(f"http://127.0.0.1:{port}/chat", tmp_path / "refused", attempts=1)
    assert isinstance(slow[0].decision, Failed) and slow[0].decision.reason == "timeout"
    # a refused connection never reached the agent: a setup mistake, played again by a resume
    assert isinstance(refused[0].decision, Failed) and refused[0].decision.reason == "not_delivered"
    assert refused[0].decision.detail.startswith("connection: no connection to")


def test_bad_answers_fail_the_attempt(tmp_path: Path) -> None:
    for path, reason in (
        ("not-json", "bad_answer"),
        ("no-answer", "bad_answer"),
        ("huge", "answer_too_large"),
    ):
        with AgentServer() as agent:
            outcomes = played(f"{agent.url}/{path}", tmp_path / path, attempts=1)
        assert isinstance(outcomes[0].decision, Failed) and outcomes[0].decision.reason == reason, path


def test_a_judge_that_answers_badly_leaves_the_attempt_without_verdict(tmp_path: Path) -> None:
    answers = itertools.cycle(
        ["not json", json.dumps({"decisions": []}), json.dumps({"decisions": [{"pass": "yes"}]})]
    )

    def badly(request: dict[str, Any]) -> str:
        return next(answers) if request.get("response_format") else "FINISHED"

    scenario = msgspec.convert({"name": "s", "user": "u", "opening": "hello", "claims": ["c"]}, Scenario)
    with AgentServer() as agent, ModelServer(badly) as models:
        spec = msgspec.convert({"url": f"{agent.url}/ok"}, AgentSpec)

        async def play() -> tuple[Outcome, ...]:
            async with httpx.AsyncClient() as client:
                model = OpenAiModel(url=models.url, key="", name="m", client=client)
                run = Run.planned(
                    folder=tmp_path / "run",
                    agent="agent",
                    declarations=(Declaration(scenario=scenario, file="s.yaml", line=1, claim_lines=(2,)),),
                    repeat=3,
                    models=Models(user=model, judge=model),
                    limits=Limits(concurrency=1),
                    provenance=Provenance(),
                )
                await run.play(
                    JsonAgent(spec, 5.0, spec.tls.context(tmp_path)),
                    Models(user=model, judge=model),
                    _Nothing(),
                )
                return tuple(run.journal.outcomes())

        outcomes = asyncio.run(play())
    assert all(
        isinstance(o.decision, NoVerdict) and o.decision.reason == "judge_unreadable" for o in outcomes
    )
    assert all(isinstance(o.decision, NoVerdict) and o.decision.raw for o in outcomes)
    assert len(outcomes) == 3
