"""Never replayed, never counted twice (docs/run-folder.md): a fresh conversation per play, the missing
attempts worked out under run.lock, runs killed at random moments and resumed, two resumes of one
folder — with real processes against a real local agent that counts what it receives."""

from __future__ import annotations

import fcntl
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer

SCENARIOS = ("billing", "refund", "greeting")
REPEAT = 4
BODY = '{"messages": "$messages", "session": "$conversation"}'


def modelled(request: dict[str, Any]) -> str:
    """The simulated user says a numbered line until the dialogue has two answers, then FINISHED;
    the judge passes the one claim."""
    if request.get("response_format"):
        return json.dumps({"decisions": [{"pass": True, "reason": "it answered"}]})
    said = sum(1 for m in request["messages"] if "echo:" in str(m.get("content", "")))
    return "FINISHED" if said >= 2 else f"line {said + 1} of the user"


def project(folder: Path) -> Path:
    (folder / "scenarios").mkdir(parents=True)
    for name in SCENARIOS:
        (folder / "scenarios" / f"{name}.yaml").write_text(
            f"name: {name}\nuser: A customer about {name}.\nclaims:\n  - The agent answers.\n"
        )
    return folder


def flags(agent: AgentServer, models: ModelServer, path: str = "jitter") -> list[str]:
    return [
        "--agent-url",
        f"{agent.url}/{path}",
        "--agent-body",
        BODY,
        "--agent-answer",
        "choices.0.message.content",
        "--model-url",
        models.url,
        "--model-key",
        "test-key-not-secret",
        "--user-model",
        "u",
        "--repeat",
        str(REPEAT),
        "--concurrency",
        "3",
    ]


def environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_"))}


def convy(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "convy", *args], cwd=cwd, env=environ(), capture_output=True, text=True
    )


def started(*args: str, cwd: Path) -> subprocess.Popen[str]:
    """convy started as from a terminal: SIGINT not ignored, even when these tests were started in
    the background (a shell starts background jobs ignoring SIGINT, and children inherit that)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return started_as_is(*args, cwd=cwd)
    finally:
        signal.signal(signal.SIGINT, before)


def started_as_is(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "convy", *args],
        cwd=cwd,
        env=environ(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def raw_lines(folder: Path) -> list[dict[str, Any]]:
    """Every line of attempts.jsonl, which must all be whole JSON objects."""
    text = (folder / "attempts.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def checked(folder: Path, agent: AgentServer) -> None:
    """The folder holds every attempt exactly once, finished, without lock or partial files; each
    play had a conversation of its own; the agent never got one turn of a conversation twice."""
    lines = raw_lines(folder)
    keys = [(line["scenario"], line["index"]) for line in lines]
    assert sorted(keys) == sorted((s, i) for s in SCENARIOS for i in range(REPEAT)), keys
    assert json.loads((folder / "run.json").read_text())["status"] == "finished"
    names = {p.name for p in folder.iterdir()}
    assert names - {"comment.md", "report.html"} == {"attempts.jsonl", "run.json"}, names
    conversations = [line["conversation"] for line in lines]
    assert all(conversations) and len(set(conversations)) == len(conversations)
    received: dict[str, list[int]] = defaultdict(list)
    for seen in agent.requests:
        if seen.body is None:  # a request cut off by the kill before its body was whole: never read
            continue
        received[seen.session].append(len(seen.body["messages"]))
    for session, sizes in received.items():
        assert len(sizes) == len(set(sizes)), f"{session} received a turn twice: {sizes}"
    for line in lines:
        if line["turns"]:
            assert line["conversation"] in received, "the line names the conversation the agent saw"


def test_each_play_of_an_attempt_has_a_conversation_of_its_own_recorded_in_its_line(tmp_path: Path) -> None:
    with AgentServer() as agent, ModelServer(modelled) as models:
        done = convy(
            "run", "--project", str(project(tmp_path / "p")), *flags(agent, models, "ok"), cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        (folder,) = (tmp_path / "p" / "results" / "agent").iterdir()
        lines = raw_lines(folder)
        sessions = {seen.session for seen in agent.requests}
        assert {line["conversation"] for line in lines} == sessions
        assert len(sessions) == len(SCENARIOS) * REPEAT
        # the last two attempts are lost, as if cut off: their plays are done again, in new conversations
        kept = (folder / "attempts.jsonl").read_text().splitlines()[:-2]
        (folder / "attempts.jsonl").write_text("".join(line + "\n" for line in kept))
        (folder / "run.json").write_text(
            (folder / "run.json").read_text().replace('"finished"', '"interrupted"')
        )
        again = convy("resume", str(folder), *flags(agent, models, "ok"), cwd=tmp_path / "p")
        assert again.returncode == 0, again.stderr
        assert "2 attempts of 12 to play" in again.stdout
        lines = raw_lines(folder)
        new = {seen.session for seen in agent.requests} - sessions
    assert len(lines) == 12 and len(new) == 2
    assert {line["conversation"] for line in lines[-2:]} == new


@pytest.mark.timeout(900)  # a guard against a hang only: 20 trials take ~20 s on a quiet machine
def test_runs_killed_at_random_moments_resume_to_every_attempt_once_never_replaying_a_turn(
    tmp_path: Path,
) -> None:
    """At least 20 trials: a run is killed (SIGKILL or SIGTERM) at a random moment, then resumed —
    sometimes killed again while resuming — until it finishes."""
    chance = random.Random(20261201)
    with AgentServer() as agent, ModelServer(modelled) as models:
        arguments = flags(agent, models)
        for trial in range(20):
            root = project(tmp_path / f"trial-{trial}")
            before = {seen.session for seen in agent.requests}
            first = started("run", "--project", str(root), *arguments, cwd=root)
            time.sleep(chance.uniform(0.05, 1.2))
            first.send_signal(chance.choice((signal.SIGKILL, signal.SIGTERM)))
            first.communicate()
            runs = list((root / "results" / "agent").glob("*/run.json"))
            if not runs:  # killed before the folder was made: nothing to resume, nothing was played
                assert not [s for s in agent.requests if s.session not in before]
                continue
            folder = runs[0].parent
            if chance.random() < 0.3:  # killed again, while resuming
                second = started("resume", str(folder), *arguments, cwd=root)
                time.sleep(chance.uniform(0.05, 0.8))
                second.send_signal(chance.choice((signal.SIGKILL, signal.SIGTERM)))
                second.communicate()
            done = convy("resume", str(folder), *arguments, cwd=root)
            assert done.returncode == 0, f"trial {trial}: {done.stderr}"
            checked(folder, agent)


def test_two_resumes_of_one_folder_play_each_missing_attempt_once(tmp_path: Path) -> None:
    with AgentServer() as agent, ModelServer(modelled) as models:
        arguments = flags(agent, models)
        root = project(tmp_path / "p")
        first = started("run", "--project", str(root), *arguments, cwd=root)
        folder: Path | None = None
        while folder is None:
            found = list((root / "results" / "agent").glob("*/attempts.jsonl"))
            if found and found[0].read_text().count("\n") >= 2:
                folder = found[0].parent
            time.sleep(0.02)
        first.send_signal(signal.SIGKILL)
        first.communicate()
        both = [started("resume", str(folder), *arguments, cwd=root) for _ in range(2)]
        ended = [(process.wait(), process.communicate()[1]) for process in both]
        codes = sorted(code for code, _ in ended)
        assert codes in ([0, 0], [0, 2]), ended
        if codes == [0, 2]:
            refused = next(err for code, err in ended if code == 2)
            assert "being played by another process" in refused and "Traceback" not in refused
        else:  # the second started after the first ended: it found nothing missing
            pass
        checked(folder, agent)


def test_the_missing_attempts_are_counted_while_run_lock_is_held(tmp_path: Path) -> None:
    """What the run plays is worked out after the lock is taken: a process that held the folder
    until then and wrote attempts meanwhile is never played over."""
    import asyncio

    import msgspec

    from convy.conduct.run import Run
    from convy.fakes import FakeAgent
    from convy.play.model import Models
    from convy.play.outcome import Outcome
    from convy.project.document import Declaration
    from convy.project.scenario import Scenario
    from convy.store.runfile import Limits, Provenance
    from tests.support.nothing import _Nothing

    scenario = msgspec.convert({"name": "s", "user": "u", "claims": ["c"]}, Scenario)
    declared = (Declaration(scenario=scenario, file="s.yaml", line=1, claim_lines=(3,)),)
    lock_held: list[bool] = []

    def watch(run: Run, missing: int) -> _Nothing:
        with (run.journal.folder / "run.lock").open("a+b") as other:
            try:
                fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                lock_held.append(False)
            except BlockingIOError:
                lock_held.append(True)
        assert missing == 3
        return _Nothing()

    with ModelServer(modelled) as models_server:
        import httpx

        from convy.play.model import OpenAiModel

        async def play() -> tuple[Outcome, ...]:
            async with httpx.AsyncClient() as client:
                model = OpenAiModel(url=models_server.url, key="k", name="m", client=client)
                models = Models(user=model, judge=model)
                run = Run.planned(
                    folder=tmp_path / "run",
                    agent="agent",
                    declarations=declared,
                    repeat=3,
                    models=models,
                    limits=Limits(),
                    provenance=Provenance(),
                )
                return await run.playing(FakeAgent(), models, watch)

        outcomes = asyncio.run(play())
    assert lock_held == [True] and len(outcomes) == 3


@pytest.mark.parametrize("signal_sent", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_marks_the_run_interrupted_and_removes_run_lock(tmp_path: Path, signal_sent: int) -> None:
    with AgentServer(slow=30) as agent, ModelServer(modelled) as models:
        root = project(tmp_path / "p")
        process = started("run", "--project", str(root), *flags(agent, models, "slow"), cwd=root)
        while not list((root / "results" / "agent").glob("*/run.lock")) or not agent.seen:
            time.sleep(0.02)
        process.send_signal(signal_sent)
        _, err = process.communicate()
        (folder,) = (root / "results" / "agent").iterdir()
    # as a shell reports a process a signal ended: 128 + the signal's number (143, 130)
    assert process.returncode == 128 + signal_sent, err
    recorded = json.loads((folder / "run.json").read_text())
    assert recorded["status"] == "interrupted"
    assert recorded["reason"] == signal.Signals(signal_sent).name
    assert f"`convy resume {folder}`" in err
    assert not (folder / "run.lock").exists() and "Traceback" not in err
