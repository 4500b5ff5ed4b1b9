"""Paying once (docs/cost.md): a verdict reused when the whole transcript, the claims, the checks
and the judge model are those of an attempt already judged (a baseline's, or an earlier one of the
same run), and with `replay: user` the baseline's simulated user replayed while the agent answers
as it did there. `convy run` against real local servers: an agent whose answers a test can change,
and a model server that counts the user model's and the judge's requests."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Self

from convy.demo.localserver import LocalServer
from tests.servers.models import ModelServer
from tests.support.command import convy, lines

BRIEF = "name: ask\nuser: A customer with three questions.\nclaims: [The agent answers.]\n"
SCRIPTED = "name: greet\nturns: [hello, again]\nclaims: [The agent answers.]\n"


class Agent:
    """An OpenAI-chat agent that answers the n-th user message with `answer n: <it>` — from turn
    `changed` on (1-based; 0 never) with `changed n: <it>` instead — and counts its requests."""

    def __init__(self) -> None:
        self.changed = 0
        self.requests = 0
        self._lock = threading.Lock()
        self._server = LocalServer(self.route)

    @property
    def url(self) -> str:
        return self._server.url + "/chat"

    def __enter__(self) -> Self:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    def route(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        said = [m["content"] for m in json.loads(body)["messages"] if m["role"] == "user"]
        with self._lock:
            self.requests += 1
        turn = len(said)
        word = "changed" if self.changed and turn >= self.changed else "answer"
        answer = {
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": f"{word} {turn}: {said[-1]}"}}
            ]
        }
        return 200, {"Content-Type": "application/json"}, json.dumps(answer).encode()


def modelled(request: dict[str, Any]) -> str:
    """The judge passes every claim; the simulated user asks question n after n − 1 answers, and
    finishes after three."""
    if request.get("response_format"):
        text = request["messages"][-1]["content"]
        count = sum(1 for line in text.splitlines() if line[:3] in ("1. ", "2. ", "3. "))
        return json.dumps({"decisions": [{"pass": True, "reason": "it answered"}] * max(count, 1)})
    answers = sum(1 for m in request["messages"][2:] if m["role"] == "user")
    return "FINISHED" if answers >= 3 else f"question {answers + 1}"


def judges(requests: list[dict[str, Any]]) -> int:
    return sum(1 for r in requests if r.get("response_format"))


def project(folder: Path, *scenarios: str) -> Path:
    (folder / "scenarios").mkdir(parents=True, exist_ok=True)
    for old in (folder / "scenarios").iterdir():
        old.unlink()
    for number, text in enumerate(scenarios):
        (folder / "scenarios" / f"s{number}.yaml").write_text(text)
    return folder


def played(folder: Path, agent: Agent, models: ModelServer, *extra: str) -> Path:
    """A run of the project; its folder (the newest)."""
    before = set(runs(folder))
    done = convy(
        "run",
        "--agent-url",
        agent.url,
        "--model-url",
        models.url,
        "--model-key",
        "sk-test-key-1",
        "--user-model",
        "user-a",
        "--judge-model",
        "judge-a",
        "--repeat",
        "2",
        "--concurrency",
        "2",
        *extra,
        cwd=folder,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = set(runs(folder)) - before
    return run


def priced(run: Path) -> None:
    """The run's attempts as if each had cost $0.01 of user model and $0.005 of judge (a reused
    verdict: saved that judge call instead)."""
    priced = []
    for outcome in lines(run):
        outcome["cost"] = {"user": 0.01, "judge": 0.0 if outcome["reused"] else 0.005, "agent": None}
        if outcome["reused"]:
            outcome["saved"] = {"user": 0.0, "judge": 0.005}
        priced.append(json.dumps(outcome))
    (run / "attempts.jsonl").write_text("\n".join(priced) + "\n")


def runs(folder: Path) -> list[Path]:
    found = folder / "results" / "agent"
    return sorted(found.iterdir()) if found.exists() else []


def test_a_second_run_with_replay_asks_no_model_and_an_agent_changed_at_turn_2_is_asked_afresh(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path, BRIEF)
    with Agent() as agent, ModelServer(modelled) as models:
        baseline = played(folder, agent, models)
        first = len(models.requests)
        priced(baseline)
        again = played(folder, agent, models, "--baseline", str(baseline), "--replay", "user")
        second = len(models.requests) - first
        agent.changed = 2
        mark = len(models.requests)
        changed = played(folder, agent, models, "--baseline", str(baseline), "--replay", "user")
        asked = models.requests[mark:]
    assert first == 2 * 4 + 1, "two attempts of three questions and a FINISHED; one judged, one reused"
    assert second == 0, "an unchanged deterministic agent: no user-model and no judge request"
    before = {(o["scenario"], o["index"]): o for o in lines(baseline)}
    now = lines(again)
    assert len(now) == 2
    for outcome in now:
        assert all(turn["replayed"] for turn in outcome["turns"]) and len(outcome["turns"]) == 3
        assert outcome["reused"] == {"run": baseline.name, "scenario": "ask", "index": outcome["index"]}
        assert outcome["decision"] == before[("ask", outcome["index"])]["decision"]
        assert outcome["ended"] == "user_finished"
    assert json.loads((again / "run.json").read_text())["spec"]["replay"] == "user"
    comment = (again / "comment.md").read_text()
    assert "2 verdicts reused" in comment and "6 turns replayed" in comment
    assert "saved $0.030" in comment, "each attempt: the baseline's user ($0.01) and judge ($0.005)"
    report = (again / "report.html").read_text()
    assert (
        f"judge: reused (no judge call) from {baseline.name}, attempt 1" in report
        and "user replayed from the baseline" in report
    )
    # the agent answers differently from turn 2: turns 1 and 2 replayed, then the user model
    for outcome in lines(changed):
        assert [turn["replayed"] for turn in outcome["turns"]] == [True, True, False]
        assert outcome["turns"][2]["user"] == "question 3" and outcome["turns"][1]["agent"].startswith(
            "changed 2"
        )
        assert outcome["reused"] is None or outcome["reused"]["run"] == changed.name
    users = [r for r in asked if not r.get("response_format")]
    assert len(users) == 2 * 2, "each attempt asks for question 3 and then hears FINISHED"
    assert judges(asked) == 1, "the new transcript is judged once, its twin reuses that"
    assert "4 turns replayed" in (changed / "comment.md").read_text()


def test_reuse_without_replay_and_within_a_run(tmp_path: Path) -> None:
    folder = project(tmp_path, SCRIPTED)
    with Agent() as agent, ModelServer(modelled) as models:
        baseline = played(folder, agent, models, "--repeat", "3")
        first = judges(models.requests)
        again = played(folder, agent, models, "--baseline", str(baseline), "--repeat", "3")
        second = len(models.requests) - first
    assert first == 1, "three attempts with one transcript: judged once"
    own = [o["reused"] for o in lines(baseline)]
    assert own.count(None) == 1
    judged = next(o["index"] for o in lines(baseline) if o["reused"] is None)
    assert all(r == {"run": baseline.name, "scenario": "greet", "index": judged} for r in own if r)
    assert second == 0
    assert all(o["reused"]["run"] == baseline.name for o in lines(again))
    assert all(not turn["replayed"] for o in lines(again) for turn in o["turns"]), "replay is off by default"
    assert "3 verdicts reused" in (again / "comment.md").read_text()


def test_changed_claims_or_a_new_judge_model_reuse_nothing_of_the_baseline(tmp_path: Path) -> None:
    folder = project(tmp_path, SCRIPTED)
    with Agent() as agent, ModelServer(modelled) as models:
        baseline = played(folder, agent, models)
        mark = len(models.requests)
        judge = played(
            folder, agent, models, "--baseline", str(baseline), "--judge-model", "judge-b", "--rejudge=false"
        )
        by_judge = judges(models.requests[mark:])
        project(folder, SCRIPTED.replace("answers.", "answers politely."))
        mark = len(models.requests)
        claims = played(folder, agent, models, "--baseline", str(baseline), "--rejudge=false")
        by_claims = judges(models.requests[mark:])
    assert by_judge == 1 and by_claims == 1, "judged afresh once; the run's second attempt reuses that"
    for run in (judge, claims):
        assert {o["reused"]["run"] for o in lines(run) if o["reused"]} == {run.name}


def test_a_scenario_whose_dialogue_changed_is_not_replayed(tmp_path: Path) -> None:
    folder = project(tmp_path, BRIEF)
    with Agent() as agent, ModelServer(modelled) as models:
        baseline = played(folder, agent, models)
        project(folder, BRIEF.replace("three questions", "a few questions"))
        mark = len(models.requests)
        run = played(folder, agent, models, "--baseline", str(baseline), "--replay", "user")
        asked = models.requests[mark:]
    assert len([r for r in asked if not r.get("response_format")]) == 2 * 4
    assert not any(turn["replayed"] for o in lines(run) for turn in o["turns"])


def test_a_resumed_run_reuses_the_verdict_of_an_attempt_its_folder_holds(tmp_path: Path) -> None:
    folder = project(tmp_path, SCRIPTED)
    with Agent() as agent, ModelServer(modelled) as models:
        run = played(folder, agent, models, "--repeat", "3")
        kept = [o for o in lines(run) if o["reused"] is None]
        (run / "attempts.jsonl").write_text(json.dumps(kept[0]) + "\n")
        mark = len(models.requests)
        done = convy(
            "resume",
            str(run),
            "--agent-url",
            agent.url,
            "--model-url",
            models.url,
            "--model-key",
            "sk-test-key-1",
            "--judge-model",
            "judge-a",
            cwd=folder,
        )
        asked = len(models.requests) - mark
    assert done.returncode == 0, done.stdout + done.stderr
    assert asked == 0, "the two attempts played again reuse the one the folder kept"
    again = [o for o in lines(run) if o["index"] != kept[0]["index"]]
    assert len(again) == 2
    assert all(
        o["reused"] == {"run": run.name, "scenario": "greet", "index": kept[0]["index"]} for o in again
    )
