"""Re-judging: when only a scenario's claims or checks changed, or the judge model did, the
baseline's transcripts are judged again (judge calls only, never the agent) and the scenario is
compared as `rejudged`; the decisions stay in the run folder, so a later compare asks nobody.
Requests are counted at the agent and model stand-ins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from convy.store.runfile import FORMAT
from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.command import convy, lines
from tests.support.rejudged import played, project, runs

CLAIM = "turns: [hello, again]\nclaims: [The agent answers.]\n"


def judged(request: dict[str, Any]) -> str:
    text = request["messages"][-1]["content"]
    count = sum(1 for line in text.splitlines() if line[:3] in ("1. ", "2. ", "3. "))
    return json.dumps({"decisions": [{"pass": True, "reason": "fine"}] * max(count, 1)})


def test_a_changed_claim_rejudges_the_baseline_without_the_agent(tmp_path: Path) -> None:
    folder = project(tmp_path, CLAIM)
    with AgentServer() as agent, ModelServer(judged) as models:
        first = played(folder, agent, models)
        assert first.returncode == 0, first.stderr
        (baseline,) = runs(folder)
        project(folder, "turns: [hello, again]\nclaims: [The agent answers politely.]\n")
        agent_before, judge_before = len(agent.requests), len(models.requests)
        second = played(folder, agent, models, "--baseline", str(baseline))
        agent_calls = len(agent.requests) - agent_before
        judge_calls = models.requests[judge_before:]
    assert second.returncode == 0, second.stdout + second.stderr
    assert agent_calls == 4, "the new run's 2 attempts of 2 turns; re-judging never asks the agent"
    assert len(judge_calls) == 3, "1 new attempt judged (its twin reuses it), the baseline's 2 again"
    assert sum("politely" in r["messages"][-1]["content"] for r in judge_calls) == 3
    run = next(p for p in runs(folder) if p != baseline)
    again = [json.loads(line) for line in (run / "rejudged.jsonl").read_text().splitlines()]
    assert sorted(r["outcome"]["index"] for r in again) == [0, 1]
    assert all(r["outcome"]["decision"]["claims"][0]["claim"] == "The agent answers politely." for r in again)
    comment = (run / "comment.md").read_text()
    assert "1 scenario re-judged" in comment and "judge tokens: " in comment
    assert "rejudged" in second.stdout
    assert json.loads((run / "run.json").read_text())["format"] == FORMAT == 2
    # a later comparison needs no new calls: no model server is running now
    later = convy("compare", str(run), str(baseline), cwd=folder)
    assert later.returncode == 0, later.stderr
    assert "rejudged" in later.stdout and "1 scenario re-judged" in (run / "comment.md").read_text()


def test_a_new_judge_model_rejudges_and_a_changed_dialogue_does_not(tmp_path: Path) -> None:
    folder = project(tmp_path, CLAIM)
    with AgentServer() as agent, ModelServer(judged) as models:
        assert played(folder, agent, models).returncode == 0
        (baseline,) = runs(folder)
        before = len(models.requests)
        judge = played(folder, agent, models, "--baseline", str(baseline), "--judge-model", "judge-b")
        by_judge = len(models.requests) - before
        project(folder, "turns: [hello, once more]\nclaims: [The agent answers politely.]\n")
        before = len(models.requests)
        seen = set(runs(folder))
        dialogue = played(folder, agent, models, "--baseline", str(baseline))
        by_dialogue = len(models.requests) - before
    assert judge.returncode == 0 and dialogue.returncode == 0
    assert by_judge == 3 and by_dialogue == 1, "a changed dialogue is never re-judged"
    (newest,) = set(runs(folder)) - seen
    assert not (newest / "rejudged.jsonl").exists()
    assert "changed" in dialogue.stdout


def test_a_format_1_baseline_or_rejudge_false_leaves_the_scenario_changed(tmp_path: Path) -> None:
    folder = project(tmp_path, CLAIM)
    with AgentServer() as agent, ModelServer(judged) as models:
        assert played(folder, agent, models).returncode == 0
        (baseline,) = runs(folder)
        spec = json.loads((baseline / "run.json").read_text())
        old = tmp_path / "old" / "agent" / "format-1"
        old.mkdir(parents=True)
        spec["format"] = 1
        for entry in spec["spec"]["scenarios"]:
            entry.pop("dialogue")
            entry.pop("criteria")
        (old / "run.json").write_text(json.dumps(spec))
        (old / "attempts.jsonl").write_text((baseline / "attempts.jsonl").read_text())
        project(folder, "turns: [hello, again]\nclaims: [The agent answers politely.]\n")
        before = len(models.requests)
        unknown = played(folder, agent, models, "--baseline", str(old))
        off = played(folder, agent, models, "--baseline", str(baseline), "--rejudge=false")
        calls = len(models.requests) - before
    assert unknown.returncode == 0 and off.returncode == 0, unknown.stderr + off.stderr
    assert calls == 2, "only the two runs' own transcripts are judged (each run's twin reuses it)"
    assert "changed" in unknown.stdout and "changed" in off.stdout


def test_changed_checks_without_claims_are_rejudged_with_no_model_call(tmp_path: Path) -> None:
    folder = project(tmp_path, "turns: [hello]\nchecks: [{contains: echo}]\n")
    with AgentServer() as agent, ModelServer(judged) as models:
        assert played(folder, agent, models).returncode == 0
        (baseline,) = runs(folder)
        project(folder, "turns: [hello]\nchecks: [{contains: echo}, {not_contains: sorry}]\n")
        second = played(folder, agent, models, "--baseline", str(baseline))
        asked = len(models.requests)
    assert second.returncode == 0, second.stderr
    assert asked == 0
    (run,) = set(runs(folder)) - {baseline}
    again = [json.loads(line) for line in (run / "rejudged.jsonl").read_text().splitlines()]
    assert [len(r["outcome"]["decision"]["claims"]) for r in again] == [2, 2]
    assert "rejudged" in second.stdout
    assert lines(run)[0]["fingerprint"] == again[0]["outcome"]["fingerprint"]
