"""One job of a workflow run of the fake repository, as the runner sets up a container action, and
the comments it posts."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from convy_action.action import Action
from convy_action.github.retries import Retries
from convy_action.runner.inputs import NAMES
from tests.servers.github import FakeGitHub, Run
from tests.support.outputs import read_outputs

FAST = Retries(attempts=3, first_wait=0.01, longest_wait=2.0, total_wait=5.0, secondary_wait=0.01)
PR = 7
START = datetime.now(UTC) - timedelta(hours=2)
CLEARED = ("CONVY_", "INPUT_", "GITHUB_", "ACTIONS_", "RUNNER_")


class Job:
    """One job of a workflow run of the fake repository, as the runner sets up a container action:
    a workspace, the event file, the file commands, and the environment."""

    def __init__(
        self,
        fake: FakeGitHub,
        root: Path,
        minute: int,
        event: str = "pull_request",
        run: Run | None = None,
        job: str = "",
        **inputs: str,
    ):
        branch = "feature" if event == "pull_request" else "main"
        self.fake = fake
        self.run: Run = run or fake.run(
            head_branch=branch, event=event, created_at=START + timedelta(minutes=minute)
        )
        self.home = root / f"job-{self.run.id}{'-' + job if job else ''}"
        self.workspace = self.home / "workspace"
        self.workspace.mkdir(parents=True)
        self.output = self.home / "set_output"
        self.summary = self.home / "step_summary"
        self.output.touch()
        self.summary.touch()
        payload: dict[str, object] = {"repository": {"id": fake.repository_id, "full_name": fake.repository}}
        payload["repository"] = {**payload["repository"], "default_branch": "main"}  # type: ignore[dict-item]
        if event == "pull_request":
            payload |= {
                "action": "synchronize",
                "number": PR,
                "pull_request": {
                    "number": PR,
                    "base": {"ref": "main", "sha": "a" * 40},
                    "head": {"ref": "feature", "sha": self.run.head_sha},
                },
            }
        (self.home / "event.json").write_text(json.dumps(payload))
        declared = {f"INPUT_{name.upper()}": "" for name in NAMES} | {"INPUT_GITHUB-TOKEN": fake.token}
        given = {f"INPUT_{name.upper().replace('_', '-')}": value for name, value in inputs.items()}
        self.environ = {
            **declared,
            "INPUT_DEMO": "true",
            **given,
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_EVENT_NAME": event,
            "GITHUB_EVENT_PATH": str(self.home / "event.json"),
            "GITHUB_REPOSITORY": fake.repository,
            "GITHUB_REPOSITORY_ID": str(fake.repository_id),
            "GITHUB_SHA": self.run.head_sha,
            "GITHUB_REF": f"refs/pull/{PR}/merge" if event == "pull_request" else "refs/heads/main",
            "GITHUB_BASE_REF": "main" if event == "pull_request" else "",
            "GITHUB_HEAD_REF": "feature" if event == "pull_request" else "",
            "GITHUB_RUN_ID": str(self.run.id),
            "GITHUB_RUN_ATTEMPT": "1",
            "GITHUB_WORKFLOW_REF": f"{fake.repository}/.github/workflows/ci.yml@refs/heads/{branch}",
            "GITHUB_API_URL": fake.api,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_OUTPUT": str(self.output),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "GITHUB_RETENTION_DAYS": "90",
            "ACTIONS_RESULTS_URL": fake.results + "/",
            "ACTIONS_RUNTIME_TOKEN": fake.runtime_token(self.run, job),
            "ACTIONS_RUNTIME_URL": fake.results + "/runtime/",
        }

    def subprocess(self) -> subprocess.CompletedProcess[str]:
        machine = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED)}
        return subprocess.run(
            [sys.executable, "-m", "convy_action"],
            env={**machine, **self.environ},
            cwd=self.workspace,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def in_process(self, *argv: str) -> tuple[int, str]:
        out = io.StringIO()
        code = Action(argv, self.environ, out, self.workspace, FAST).exit_code()
        return code, out.getvalue()

    def outputs(self) -> dict[str, str]:
        return read_outputs(self.output.read_text())


def comments(fake: FakeGitHub) -> list[str]:
    return [c.body for c in fake.comments if c.issue == PR]


def cancelled(job: Job, after: str) -> str:
    """Run the job's action and send it SIGTERM once it prints a line starting with `after`; it must
    exit 130 (interrupted). What it wrote to stderr."""
    machine = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED)}
    with subprocess.Popen(
        [sys.executable, "-m", "convy_action"],
        env={**machine, **job.environ},
        cwd=job.workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith(after):
                process.send_signal(signal.SIGTERM)
                break
        rest, _ = process.communicate(timeout=120)
    assert process.returncode == 143, rest  # 128 + SIGTERM, as a shell reports it
    return rest
