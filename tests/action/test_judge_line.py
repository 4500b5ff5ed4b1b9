"""The Judge line offline (docs/judge.md): the action's `--dry-run --demo` and `convy run --demo`
calibrate the demo's scripted judge on the demo's labels before the first attempt and show the line
under the verdict, κ recomputed here from the labels' calibration.jsonl; the `labels` input
(INPUT_LABELS) turns it off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.command import convy, only_run


def dry_run(folder: Path, **inputs: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_", "GITHUB_"))}
    environ.update({f"INPUT_{name.upper()}": value for name, value in inputs.items()})
    return subprocess.run(
        [sys.executable, "-m", "convy_action", "--demo", "--dry-run"],
        cwd=folder,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def kappa(folder: Path) -> float:
    """Cohen's κ of the run's calibration.jsonl, over the labels chosen at random."""
    pairs: list[tuple[bool, bool]] = []
    for raw in (folder / "calibration.jsonl").read_text().splitlines():
        line = json.loads(raw)
        if line["chosen"] != "random":
            continue
        judged = {decision["claim"]: decision["pass"] for decision in line["decisions"]}
        pairs += [(person, judged[claim]) for claim, person in line["person"].items() if claim in judged]
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    person = sum(a for a, _ in pairs) / n
    judge = sum(b for _, b in pairs) / n
    chance = person * judge + (1 - person) * (1 - judge)
    return (observed - chance) / (1 - chance)


def judge_line(comment: str) -> str:
    lines = [line for line in comment.splitlines() if line.strip()]
    verdict = next(i for i, line in enumerate(lines) if line.startswith("## "))
    return lines[verdict + 1]


def test_the_action_s_demo_dry_run_shows_the_judge_line(tmp_path: Path) -> None:
    done = dry_run(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    run = only_run(tmp_path / "results")
    line = judge_line((run / "comment.md").read_text())
    assert line.startswith(f"Judge: κ {kappa(run):.2f} (") and "labelled decisions · false passes" in line
    assert line in done.stdout


def test_the_labels_input_none_turns_calibration_off(tmp_path: Path) -> None:
    done = dry_run(tmp_path, labels="none")
    assert done.returncode == 0, done.stdout + done.stderr
    run = only_run(tmp_path / "results")
    assert judge_line((run / "comment.md").read_text()) == "Judge: not measured against labels (convy label)"
    assert not (run / "calibration.jsonl").exists()


def test_convy_run_demo_shows_the_judge_line(tmp_path: Path) -> None:
    done = convy("run", "--demo", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    run = only_run(tmp_path / "results")
    line = judge_line((run / "comment.md").read_text())
    assert line.startswith(f"Judge: κ {kappa(run):.2f} (")
    assert line in done.stdout
