"""The gate (docs/gate.md) where the action runs it: an agent whose answers convy cannot read fails
the job on max-failed on its first run (no baseline), naming the reason in the comment and the log;
the `max-failed` input is read; fail-fast stops the run."""

from __future__ import annotations

import json
from pathlib import Path

from convy.demo.servers import DemoServers
from tests.servers.github import FakeGitHub
from tests.support.job import Job, comments


def evals(job: Job, answer: str) -> None:
    project = job.workspace / "evals"
    (project / "agents").mkdir(parents=True)
    (project / "agents" / "support.yaml").write_text(
        f'url: ${{CONVY_DEMO_URL}}/chat\nbody: {{"messages": "$messages"}}\nanswer: {answer}\n'
    )
    (project / "scenarios").mkdir()
    (project / "scenarios" / "hello.yaml").write_text(
        "name: hello\nuser: You say hello.\nopening: Hello!\nmax_turns: 1\nclaims: [The agent answers.]\n"
    )


def played(job: Job, demo: DemoServers, **inputs: str) -> tuple[int, str]:
    flags = demo.flags()
    job.environ |= {
        "INPUT_DEMO": "",
        "INPUT_PROJECT": "evals",
        "INPUT_REPEAT": "12",
        "INPUT_CONCURRENCY": "1",
        "INPUT_MODEL-URL": str(flags["model-url"]),
        "INPUT_USER-MODEL": "scripted-user",
        "INPUT_JUDGE-MODEL": "scripted-judge",
        **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
        **demo.environ(),
    }
    return job.in_process()


def test_an_unreadable_answer_fails_the_first_run_on_max_failed_and_stops_early(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    job = Job(fake, tmp_path, 10, baseline="none")
    evals(job, "reply.wrong")
    with DemoServers() as demo:
        code, log = played(job, demo)
    assert code == 1, log[-3000:]
    assert "convy: fail (max-failed): the agent failed" in log and "bad_answer" in log
    (body,) = comments(fake)
    assert "## ❌ convy: fail · support" in body and "**Decided by `max-failed`:**" in body
    assert "fail-fast stopped the run" in body and "| the agent " in body
    folder = job.workspace / job.outputs()["run-dir"]
    run = json.loads((folder / "run.json").read_text())
    assert run["status"] == "stopped" and len((folder / "attempts.jsonl").read_text().splitlines()) < 12


def test_the_max_failed_and_fail_fast_inputs_are_read(fake: FakeGitHub, tmp_path: Path) -> None:
    job = Job(fake, tmp_path, 10, baseline="none")
    evals(job, "reply.wrong")
    with DemoServers() as demo:
        code, log = played(job, demo, **{"MAX-FAILED": "1", "FAIL-FAST": "false"})
    # every failure allowed and fail-fast off: every attempt is played, and since none held the
    # gate still fails (nothing-held), never green on nothing
    assert code == 1, log[-3000:]
    assert "nothing-held" in log
    folder = job.workspace / job.outputs()["run-dir"]
    assert json.loads((folder / "run.json").read_text())["status"] == "finished"
    assert len((folder / "attempts.jsonl").read_text().splitlines()) == 12
