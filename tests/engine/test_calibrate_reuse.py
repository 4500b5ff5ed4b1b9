"""`convy calibrate` (docs/labels.md) on labels chosen at failing ones (counted in the disagreements
and per claim, never in the overall figures, sensitivity and specificity), and the judge's decisions
reused from a run folder's calibration.jsonl and from a baseline's, with no judge call."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from convy import Project, Sources
from convy.labels import Calibration
from tests.servers.models import ModelServer
from tests.support.calibration import (
    ATTEMPTS,
    CLEAR,
    NUMBER,
    REFUND,
    calibrate,
    judge,
    judged,
    labels_yaml,
    project,
    written,
)

WRONG: list[tuple[str, dict[str, bool | str]]] = [
    ("Sorry to hear that.", {REFUND: True, NUMBER: True, CLEAR: "clear"}),
    ("Sorry, no.", {REFUND: True, NUMBER: True, CLEAR: "clear"}),
]
"""Whole labels the person holds and the scripted judge fails on every claim: chosen at failing ones."""


def failing(attempts: list[tuple[str, dict[str, bool | str]]]) -> str:
    return labels_yaml(attempts).replace("- scenario: refund\n", "- scenario: refund\n  chosen: failing\n")


def test_labels_chosen_failing_count_in_disagreements_and_per_claim_not_overall(tmp_path: Path) -> None:
    figures = []
    outs = []
    for name, text in (("random", labels_yaml(ATTEMPTS)), ("both", labels_yaml(ATTEMPTS, failing(WRONG)))):
        root = project(tmp_path / name, text)
        with ModelServer(judge) as server:
            code, out, err = calibrate(root, server)
        assert code == 0, err
        figures.append(json.loads(written(root)[0].read_text()))
        outs.append(out)
    alone, both = figures
    for key in ("labels", "decisions", "agreement", "kappa", "kappa_low", "kappa_high", "false_pass"):
        assert both[key] == alone[key], key
    assert both["false_fail"] == alone["false_fail"]
    assert both["sensitivity"] == alone["sensitivity"] and both["specificity"] == alone["specificity"]

    whole = [
        (all(v == "clear" if isinstance(v, str) else v for v in d.values()), all(judged(agent).values()))
        for agent, d in ATTEMPTS + WRONG
    ]
    held = [b for a, b in whole if a]
    assert both["sensitivity"] != sum(held) / len(held), "the failing labels would have changed it"

    per_claim = {c["claim"]: c["decisions"] for c in both["claims"]}
    assert per_claim == {c["claim"]: c["decisions"] + len(WRONG) for c in alone["claims"]}
    before = int(outs[0].split("Disagreements: ")[1].split()[0])
    assert f"Disagreements: {before + 3 * len(WRONG)}" in outs[1]
    assert outs[1].count("(chosen: failing)") == 3 * len(WRONG)


def test_decisions_are_reused_from_a_run_folder_and_from_a_baseline_with_no_judge_call(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, labels_yaml(ATTEMPTS))
    with ModelServer(judge) as server:
        code, _, err = calibrate(root, server)
        assert code == 0, err
        asked = len(server.requests)
        assert asked == len(ATTEMPTS)
        first = written(root)[0].parent
        run = root / "results" / "bot" / "20261203T063334Z-3d13"
        run.mkdir(parents=True)
        (first / "calibration.jsonl").rename(run / "calibration.jsonl")
        code, out, err = calibrate(root, server)
        assert code == 0, err
        assert len(server.requests) == asked, "a run's calibration.jsonl was not reused"
        assert f"({len(ATTEMPTS)} reused: no judge call)" in out

        baseline = tmp_path / "baseline"
        baseline.mkdir()
        shutil.move(run / "calibration.jsonl", baseline / "calibration.jsonl")
        shutil.rmtree(root / "results")
        flags = {"project": str(root), "model-url": server.url, "judge-model": "judge-1"}
        sources = Sources(flags, {}, root)
        one = Project(sources.settings(), sources, {})
        done = Calibration(one, root / "labels", also=(baseline,)).done()
        assert len(server.requests) == asked, "the baseline's calibration.jsonl was not reused"
        assert done.reused == len(ATTEMPTS)
        alone = Calibration(one, root / "labels").done()
        assert len(server.requests) == asked + len(ATTEMPTS) and alone.reused == 0
        assert alone.file == done.file
