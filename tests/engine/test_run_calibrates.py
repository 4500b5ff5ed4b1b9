"""Every run calibrates (docs/judge.md), end to end against the agent and model stand-ins: with
labels, the judge decides them before the first attempt (run.json `calibration`, the run folder's
calibration.jsonl, the Judge line under the comment's verdict), a second run with nothing changed
makes no calibration call (requests counted at the model server), the baseline's folder lends its
decisions, gate rule judge-untrusted, the pass rate corrected for the judge recomputed here from
its formula, and a malformed label file exit 2 before any request."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.command import convy

ANSWERS, SINGS = "The agent answers.", "The agent sings."


def agent_lines(request: dict[str, Any]) -> str:
    text = str(request["messages"][-1]["content"])
    return " ".join(line for line in text.splitlines() if "Agent:" in line or "agent:" in line)


def calibrating(request: dict[str, Any]) -> bool:
    """A judge call on a labelled transcript (the labels' agent lines say LABEL)."""
    return "LABEL" in str(request["messages"][-1]["content"])


def judge(request: dict[str, Any]) -> str:
    """The judge: on a label, the claim holds where the agent said `yes`; on an attempt, `answers`
    holds and `sings` does not."""
    text = str(request["messages"][-1]["content"])
    passed = " yes" in agent_lines(request) if calibrating(request) else SINGS not in text
    return json.dumps({"decisions": [{"pass": passed, "reason": "said" if passed else "not said"}]})


def label(index: int, judge_holds: bool, person: bool, chosen: str = "random") -> str:
    said = "yes" if judge_holds else "no"
    return (
        f"- scenario: answers\n  chosen: {chosen}\n"
        f'  transcript:\n    - {{user: "hello", agent: "LABEL {index} {said}"}}\n'
        f"  decisions:\n    {json.dumps(ANSWERS)}: {json.dumps(person)}\n"
    )


def labels(holds: tuple[int, int], nots: tuple[int, int], failing: int = 0) -> str:
    """Labels: the person holds `holds[0]` of them (the judge `holds[1]` of those), holds none of
    `nots[0]` (the judge says not on `nots[1]` of those); `failing` more chosen among failing ones,
    where the judge and the person disagree."""
    items: list[str] = []
    for i in range(holds[0]):
        items.append(label(len(items), i < holds[1], True))
    for i in range(nots[0]):
        items.append(label(len(items), i >= nots[1], False))
    for _ in range(failing):
        items.append(label(len(items), False, True, "failing"))
    return "".join(items)


def project(folder: Path, labelled: str) -> Path:
    (folder / "scenarios").mkdir(parents=True, exist_ok=True)
    (folder / "scenarios" / "answers.yaml").write_text(f"turns: [hello]\nclaims: [{ANSWERS}]\n")
    (folder / "scenarios" / "sings.yaml").write_text(f"turns: [hello]\nclaims: [{SINGS}]\n")
    (folder / "labels").mkdir(exist_ok=True)
    (folder / "labels" / "set.yaml").write_text(labelled)
    return folder


def played(folder: Path, agent: AgentServer, models: ModelServer, *extra: str) -> Any:
    return convy(
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


def runs(folder: Path) -> list[Path]:
    return sorted((folder / "results" / "agent").iterdir())


def kappa(pairs: list[tuple[bool, bool]]) -> float:
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    person = sum(a for a, _ in pairs) / n
    judged = sum(b for _, b in pairs) / n
    chance = person * judged + (1 - person) * (1 - judged)
    return (observed - chance) / (1 - chance)


def test_a_run_calibrates_before_its_first_attempt_and_a_second_run_makes_no_calibration_call(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path, labels((12, 11), (12, 10), failing=2))
    with AgentServer() as agent, ModelServer(judge) as models:
        first = played(folder, agent, models)
        calls = [calibrating(r) for r in models.requests]
        (run,) = runs(folder)
        second = played(folder, agent, models)
        again = [calibrating(r) for r in models.requests[len(calls) :]]
    assert first.returncode == 0, first.stdout + first.stderr
    assert second.returncode == 0, second.stdout + second.stderr
    assert sum(calls) == 26, "every labelled attempt decided once"
    assert calls.index(False) == 26, "calibration comes before the first attempt's judge call"
    assert sum(again) == 0, "nothing changed: every decision reused"
    record = json.loads((run / "run.json").read_text())["calibration"]
    pairs = [(True, i < 11) for i in range(12)] + [(False, i >= 10) for i in range(12)]
    assert record["labels"] == 24 and record["decisions"] == 24, "chosen: failing left out"
    assert record["kappa"] == kappa(pairs)
    assert record["false_pass"] == 2 / 12 and record["false_fail"] == 1 / 12
    assert record["sensitivity"] == 11 / 12 and record["specificity"] == 10 / 12
    assert record["fingerprint"] and record["stale"] == 0
    assert set(record) >= {
        "fingerprint", "labels", "decisions", "stale", "agreement", "kappa", "kappa_low",
        "kappa_high", "false_pass", "false_fail", "sensitivity", "specificity",
    }  # fmt: skip
    assert record["kappa_low"] <= record["kappa"] <= record["kappa_high"]
    assert len(record["disagreements"]) == 5, "3 at random, 2 chosen among failing ones"
    assert len((run / "calibration.jsonl").read_text().splitlines()) == 26
    comment = (run / "comment.md").read_text().splitlines()
    verdict = next(i for i, line in enumerate(comment) if line.startswith("## "))
    line = next(line for line in comment[verdict + 1 :] if line.strip())
    low, high = record["kappa_low"], record["kappa_high"]
    assert line == (
        f"Judge: κ {record['kappa']:.2f} ({low:.2f}–{high:.2f}) on 24 labelled decisions · "
        f"false passes {2 / 12:.0%} · false fails {1 / 12:.0%}"
    )
    report = (run / "report.html").read_text()
    assert "Where the judge and the labels disagree" in report and "LABEL" not in report
    assert report.count("chosen: failing") == 2


def test_the_baseline_folder_lends_its_decisions(tmp_path: Path) -> None:
    folder = project(tmp_path, labels((10, 9), (10, 9)))
    with AgentServer() as agent, ModelServer(judge) as models:
        assert played(folder, agent, models).returncode == 0
        (run,) = runs(folder)
        baseline = tmp_path / "downloaded" / run.name
        shutil.copytree(run, baseline)
        shutil.rmtree(folder / "results")
        before = len(models.requests)
        done = played(folder, agent, models, "--baseline", str(baseline))
        again = [calibrating(r) for r in models.requests[before:]]
    assert done.returncode == 0, done.stdout + done.stderr
    assert sum(again) == 0


def test_no_labels_says_the_judge_is_not_measured(tmp_path: Path) -> None:
    folder = project(tmp_path, "")
    shutil.rmtree(folder / "labels")
    with AgentServer() as agent, ModelServer(judge) as models:
        done = played(folder, agent, models)
        off = project(tmp_path, labels((10, 9), (10, 9)))
        second = played(off, agent, models, "--labels", "none")
        calls = sum(calibrating(r) for r in models.requests)
    assert done.returncode == 0 and second.returncode == 0
    assert calls == 0, "labels none: no calibration"
    for run in runs(folder):
        assert "calibration" not in json.loads((run / "run.json").read_text())
        assert "Judge: not measured against labels (convy label)" in (run / "comment.md").read_text()
        assert not (run / "calibration.jsonl").exists()


def test_a_malformed_label_file_is_exit_2_with_its_line_before_any_request(tmp_path: Path) -> None:
    folder = project(tmp_path, labels((2, 2), (0, 0)) + "- scenario: answers\n  decisions: yes\n")
    with AgentServer() as agent, ModelServer(judge) as models:
        done = played(folder, agent, models)
        asked = len(agent.requests) + len(models.requests)
    assert done.returncode == 2, done.stdout + done.stderr
    assert re.search(r"labels/set\.yaml:\d+", done.stderr), done.stderr
    assert asked == 0


def test_judge_untrusted_is_inconclusive_under_min_judge_kappa_or_with_too_few_labels(tmp_path: Path) -> None:
    folder = project(tmp_path, labels((6, 5), (6, 3), failing=4))
    pairs = [(True, i < 5) for i in range(6)] + [(False, i >= 3) for i in range(6)]
    with AgentServer() as agent, ModelServer(judge) as models:
        low = played(folder, agent, models, "--min-judge-kappa", "0.9", "--min-labels", "10")
        few = played(folder, agent, models, "--min-judge-kappa", "0.1")
        earlier = set(runs(folder))
        off = played(folder, agent, models, "--min-labels", "100")
    assert low.returncode == 3, low.stdout + low.stderr
    assert (
        f"the judge's κ {kappa(pairs):.2f} on 12 labelled decisions is under min-judge-kappa 0.90"
        in low.stdout
    )
    assert "judge-untrusted" in low.stdout
    assert few.returncode == 3, few.stdout + few.stderr
    assert "rests on 12 labelled decisions, fewer than min-labels 20 (min-judge-kappa 0.10)" in few.stdout
    assert off.returncode == 0, "min-judge-kappa 0: the rule is off"
    (newest,) = set(runs(folder)) - earlier
    comment = (newest / "comment.md").read_text()
    assert "Pass rate corrected for the judge" not in comment
    report = (newest / "report.html").read_text()
    assert "Pass rate corrected for the judge: not shown (too few labels: 12 labelled decisions" in report


def test_the_pass_rate_corrected_for_the_judge_is_its_formula(tmp_path: Path) -> None:
    folder = project(tmp_path, labels((10, 9), (10, 8), failing=3))
    with AgentServer() as agent, ModelServer(judge) as models:
        done = played(folder, agent, models)
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = runs(folder)
    se, sp = 9 / 10, 8 / 10
    q = 2 / 4  # the judge holds `answers`' 2 attempts of the 4 judged, whose checks all passed
    expected = 1.0 * min(1.0, max(0.0, (q + sp - 1) / (se + sp - 1)))
    comment = (run / "comment.md").read_text()
    found = re.search(r"Pass rate corrected for the judge: ([\d.]+)% \(([\d.]+)–([\d.]+)%\)", comment)
    assert found, comment
    value, low, high = (float(part) for part in found.groups())
    assert value == round(expected * 100, 1)
    assert low <= value <= high
    assert "from 20 labelled decisions" in comment


def test_the_calibration_s_judge_calls_are_part_of_the_run_s_cost(tmp_path: Path) -> None:
    folder = project(tmp_path, labels((10, 9), (10, 9)))
    prices = json.dumps({"judge-a": {"input": 1.0, "output": 2.0}})
    with AgentServer() as agent, ModelServer(judge) as models:
        first = played(folder, agent, models, "--prices", prices)
        asked = [r for r in models.requests if calibrating(r)]
        answers = [judge(r) for r in asked]
        (made,) = runs(folder)
        second = played(folder, agent, models, "--prices", prices)
        (again,) = set(runs(folder)) - {made}
    assert first.returncode == 0 and second.returncode == 0, first.stdout + first.stderr
    tokens = [
        (sum(len(m["content"]) for m in r["messages"]), len(answer))
        for r, answer in zip(asked, answers, strict=True)
    ]
    expected = sum(i * 1.0 + o * 2.0 for i, o in tokens) / 1_000_000
    record = json.loads((made / "run.json").read_text())["calibration"]
    assert abs(record["cost"] - expected) < 1e-9
    assert json.loads((again / "run.json").read_text())["calibration"]["cost"] == 0.0, "every decision reused"
    attempts = [json.loads(line)["cost"] for line in (made / "attempts.jsonl").read_text().splitlines()]
    spent = expected + sum(part or 0.0 for cost in attempts for part in cost.values())
    comment = (made / "comment.md").read_text()
    assert f"${spent:.2g}" in comment or f"${spent:,.2f}" in comment, comment
