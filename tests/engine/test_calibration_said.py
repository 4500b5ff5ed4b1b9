"""A run's calibration said (the first hour): the stale decisions and the copies of a labelled
attempt are named at file:line with the run's progress before it calibrates, three copies of one label count
once; a run interrupted while the judge is calibrated keeps the decisions made so far for the next
run and says there is no folder to resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.command import convy

CLAIM = "The agent answers."
VERDICT = json.dumps({"decisions": [{"pass": True, "reason": "said"}]})


def label(index: int, claim: str = CLAIM) -> str:
    return (
        f'- scenario: answers\n  transcript:\n    - {{user: "hello", agent: "LABEL {index}"}}\n'
        f"  decisions:\n    {json.dumps(claim)}: true\n"
    )


def project(folder: Path, labelled: str) -> Path:
    (folder / "scenarios").mkdir(parents=True)
    (folder / "scenarios" / "answers.yaml").write_text(f"turns: [hello]\nclaims: [{CLAIM}]\n")
    (folder / "labels").mkdir()
    (folder / "labels" / "set.yaml").write_text(labelled)
    return folder


def written(root: Path) -> list[str]:
    """The judge's decisions kept so far in the run folder's calibration.jsonl."""
    found = list((root / "results").glob("*/*/calibration.jsonl"))
    return found[0].read_text().splitlines() if found else []


def test_copies_count_once_and_copies_and_stale_decisions_are_named_at_their_line(tmp_path: Path) -> None:
    root = project(tmp_path / "p", label(1) * 3 + label(2, "The agent sings.") + label(3))
    with AgentServer() as agent, ModelServer(lambda request: VERDICT) as models:
        done = convy(
            "run",
            *("--agent-url", f"{agent.url}/ok", "--model-url", models.url, "--user-model", "m"),
            *("--repeat", "1", "--min-labels", "1"),
            cwd=root,
        )
    assert done.returncode in (0, 3), done.stdout + done.stdout
    assert "convy: 3 label decisions left out of the calibration:" in done.stdout
    assert (
        "labels/set.yaml:10 answers" in done.stdout
        and "a copy of the label at labels/set.yaml:1" in done.stdout
    )
    assert "labels/set.yaml:15 answers" in done.stdout, "the copy at line 6 and 11 and the stale claim"
    assert "the claim is no longer one of the scenario's claims" in done.stdout
    assert "calibrating the judge on 2 labelled attempts" in done.stdout
    [run] = (root / "results").glob("*/*/run.json")
    assert json.loads(run.read_text())["calibration"]["decisions"] == 2, "three copies count once"


def test_a_run_interrupted_while_calibrating_keeps_its_decisions_and_says_there_is_no_run(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "p", "".join(label(n) for n in range(40)))
    asked = threading.Event()

    def slow_judge(request: dict[str, Any]) -> str:
        asked.set()
        time.sleep(0.2)
        return VERDICT

    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_"))}
    with AgentServer() as agent, ModelServer(slow_judge) as models:
        command = [sys.executable, "-m", "convy", "run", "--agent-url", f"{agent.url}/ok"]
        command += ["--model-url", models.url, "--user-model", "m", "--concurrency", "1"]
        process = subprocess.Popen(command, cwd=root, env=environ, stderr=subprocess.PIPE, text=True)
        assert asked.wait(60)
        while len(written(root)) < 3:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        first = len(models.requests)
        assert process.returncode == 130, err
        assert "there is no run to resume" in err and "convy resume" not in err
        [kept] = (root / "results").glob("*/*/calibration.jsonl")
        assert len(kept.read_text().splitlines()) >= 3 and str(kept) in err
        assert not (kept.parent / "run.json").exists()
        again = convy(*command[3:], "--repeat", "1", cwd=root)
    assert again.returncode in (0, 1, 3), again.stdout + again.stderr
    calibrated = len(models.requests) - first - 1  # the one attempt's judge call
    assert calibrated <= 40 - 3, "the decisions kept are not asked again"
