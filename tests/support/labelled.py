"""A project with labels, played by the `convy` command against the agent and model stand-ins: one
scenario whose claim the judge holds on every attempt, and labelled transcripts on which the
scripted judge says what each label tells it to, so a test sets both sides of the judge's κ."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer

CLAIM = "The agent answers."


def convy(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The `convy` command as a user runs it, without the environment's CONVY_* and INPUT_*."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_", "GITHUB_"))}
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "convy", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=180,
    )


def calibrating(request: dict[str, Any]) -> bool:
    """A judge call on a labelled transcript (the labels' agent lines say LABEL)."""
    return "LABEL" in str(request["messages"][-1]["content"])


def judge(request: dict[str, Any]) -> str:
    """The judge: on a label, the claim holds where the label's agent line says `yes`; on an attempt
    of the run, it holds."""
    text = str(request["messages"][-1]["content"])
    agent = " ".join(line for line in text.splitlines() if "LABEL" in line)
    passed = " yes" in agent if calibrating(request) else True
    return json.dumps({"decisions": [{"pass": passed, "reason": "said" if passed else "not said"}]})


def labels(decisions: list[tuple[bool, bool]]) -> str:
    """A labels file: one labelled attempt per (person, judge) pair, the judge's side written into
    the transcript for the scripted judge to read."""
    return "".join(
        f"- scenario: answers\n"
        f'  transcript:\n    - {{user: "hello", agent: "LABEL {index} {"yes" if judged else "no"}"}}\n'
        f"  decisions:\n    {json.dumps(CLAIM)}: {json.dumps(person)}\n"
        for index, (person, judged) in enumerate(decisions)
    )


def pairs(holds: tuple[int, int], nots: tuple[int, int]) -> list[tuple[bool, bool]]:
    """The person holds `holds[0]` (the judge holds `holds[1]` of those), holds none of `nots[0]`
    (the judge says not on `nots[1]` of those)."""
    return [(True, i < holds[1]) for i in range(holds[0])] + [(False, i >= nots[1]) for i in range(nots[0])]


def project(folder: Path, decisions: list[tuple[bool, bool]]) -> Path:
    """The project: scenario `answers`, and labels/set.yaml."""
    (folder / "scenarios").mkdir(parents=True, exist_ok=True)
    (folder / "scenarios" / "answers.yaml").write_text(f"turns: [hello]\nclaims: [{CLAIM}]\n")
    (folder / "labels").mkdir(exist_ok=True)
    (folder / "labels" / "set.yaml").write_text(labels(decisions))
    return folder


class Played:
    """A `convy run` done: the command's result and the run folder it made."""

    def __init__(self, done: subprocess.CompletedProcess[str], run: Path) -> None:
        self.done = done
        self.run = run

    @property
    def code(self) -> int:
        return self.done.returncode

    @property
    def said(self) -> str:
        return self.done.stdout + self.done.stderr

    def comment(self) -> str:
        return (self.run / "comment.md").read_text()

    def record(self) -> dict[str, Any]:
        """run.json's `calibration`."""
        calibration: dict[str, Any] = json.loads((self.run / "run.json").read_text())["calibration"]
        return calibration


def played(folder: Path, agent: AgentServer, models: ModelServer, *extra: str) -> Played:
    """`convy run` of the project with no baseline, its other settings the defaults."""
    results = folder / "results" / "agent"
    before = set(results.iterdir()) if results.exists() else set()
    done = convy(
        "run",
        "--agent-url",
        f"{agent.url}/ok",
        "--model-url",
        models.url,
        "--model-key",
        "sk-test-key-1",
        "--judge-model",
        "judge-a",
        "--repeat",
        "2",
        *extra,
        cwd=folder,
    )
    made = set(results.iterdir()) - before if results.exists() else set()
    assert len(made) == 1, done.stdout + done.stderr
    return Played(done, made.pop())


def kappa(decisions: list[tuple[bool, bool]]) -> float:
    """Cohen's κ, computed here: (observed − chance) / (1 − chance)."""
    n = len(decisions)
    observed = sum(a == b for a, b in decisions) / n
    person = sum(a for a, _ in decisions) / n
    judged = sum(b for _, b in decisions) / n
    chance = person * judged + (1 - person) * (1 - judged)
    return (observed - chance) / (1 - chance)
