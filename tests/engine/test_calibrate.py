"""Labels and `convy calibrate` (docs/labels.md), end to end: label files read (stale decisions
counted, malformed ones exit 2 with file:line before any request), the judge's figures recomputed
here from the scripted judge's known decisions, earlier decisions reused with no judge call, and
the demo calibrated offline."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from convy.errors import ConfigurationError
from convy.project.labels import Labels
from convy.project.scenarios import Scenarios
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
from tests.support.command import convy


def kappa(pairs: list[tuple[bool, bool]]) -> float:
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    person = sum(a for a, _ in pairs) / n
    judge_ = sum(b for _, b in pairs) / n
    chance = person * judge_ + (1 - person) * (1 - judge_)
    return (observed - chance) / (1 - chance)


def test_label_files_are_read_and_stale_decisions_left_out_and_counted(tmp_path: Path) -> None:
    stale = (
        "- scenario: refund\n  chosen: failing\n  by: Ana\n  source: {run: r1, index: 2}\n"
        "  transcript:\n    - {user: hi, agent: 'Refund today.'}\n"
        '  decisions:\n    "The agent offers a refund.": true\n    "The agent greets the user.": true\n'
        f"    {json.dumps(CLEAR)}: excellent\n"
        '- scenario: gone\n  transcript: []\n  decisions: {"Anything.": false}\n'
    )
    root = project(tmp_path, labels_yaml(ATTEMPTS[:1], stale))
    used, left = Labels(root / "labels", root).against(Scenarios(root).all())
    assert [u.label.chosen for u in used] == ["random", "failing"]
    assert used[0].passes == {REFUND: True, NUMBER: False, CLEAR: True}
    assert used[0].grades == {CLEAR: "clear"} and used[0].whole
    assert used[1].label.by == "Ana" and used[1].label.source.index == 2
    assert used[1].passes == {REFUND: True} and not used[1].whole
    assert [(s.scenario, s.claim) for s in left] == [
        ("refund", "The agent greets the user."),
        ("refund", CLEAR),
        ("gone", "Anything."),
    ]
    assert [s.where for s in left] == ["labels/set.yaml:16", "labels/set.yaml:17", "labels/set.yaml:20"], (
        "each stale decision at its own line"
    )
    assert used[1].where == "labels/set.yaml:8"
    assert "no longer" in left[0].why
    assert "grades" in left[1].why and "gone" in left[2].why


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (
            "- scenario: refund\n  transcript: []\n  decisions: {a: true}\n  color: red\n",
            4,
            "unknown key `color`",
        ),
        ("- scenario: refund\n  transcript: []\n", 1, "`decisions` is missing"),
        ("- scenario: refund\n  transcript: []\n  decisions:\n    a: 3\n", 3, "bool | str"),
        ("- scenario: refund\n  chosen: sometimes\n  transcript: []\n  decisions: {a: true}\n", 2, "chosen"),
        ("- scenario: refund\n  transcript:\n    - {user: hi}\n  decisions: {a: true}\n", 3, "`agent`"),
        ("- scenario: refund\n  transcript: [\n", 2, "YAML syntax error"),
        ("scenario: refund\n", 1, "a list of labelled attempts"),
    ],
)
def test_a_malformed_label_file_is_exit_2_with_file_and_line_before_any_request(
    tmp_path: Path, text: str, line: int, words: str
) -> None:
    root = project(tmp_path, text)
    with pytest.raises(ConfigurationError, match=re.escape(f"labels/set.yaml:{line}")):
        Labels(root / "labels", root).read()
    with ModelServer(judge) as server:
        code, _, err = calibrate(root, server)
    assert code == 2, err
    assert f"labels/set.yaml:{line}" in err and words in err
    assert server.requests == []


def test_no_labels_is_exit_2(tmp_path: Path) -> None:
    root = project(tmp_path, None)
    with ModelServer(judge) as server:
        code, _, err = calibrate(root, server)
    assert code == 2 and "no labels" in err
    assert server.requests == []


def test_calibrate_gives_the_figures_a_person_would_compute_and_reuses_its_decisions(tmp_path: Path) -> None:
    failing = labels_yaml([("Sorry, nothing to do.", {REFUND: True})]).replace(
        "- scenario: refund\n", "- scenario: refund\n  chosen: failing\n"
    )
    root = project(tmp_path, labels_yaml(ATTEMPTS, failing))
    with ModelServer(judge) as server:
        code, out, err = calibrate(root, server)
        assert code == 0, err
        assert len(server.requests) == len(ATTEMPTS) + 1
        first = json.loads(written(root)[0].read_text())

        pairs = [
            (value if isinstance(value, bool) else value == "clear", judged(agent)[claim])
            for agent, decisions in ATTEMPTS
            for claim, value in decisions.items()
        ]
        assert first["labels"] == len(ATTEMPTS) and first["decisions"] == len(pairs) == 30
        assert first["stale"] == 0
        assert first["agreement"] == pytest.approx(sum(a == b for a, b in pairs) / len(pairs))
        assert first["kappa"] == pytest.approx(kappa(pairs))
        nots = [b for a, b in pairs if not a]
        holds = [b for a, b in pairs if a]
        assert first["false_pass"] == pytest.approx(sum(nots) / len(nots))
        assert first["false_fail"] == pytest.approx(sum(not b for b in holds) / len(holds))
        assert first["kappa_low"] <= first["kappa"] <= first["kappa_high"]
        assert first["kappa_low"] < first["kappa_high"]
        whole = [
            (all(a == "clear" if isinstance(a, str) else a for a in d.values()), all(judged(agent).values()))
            for agent, d in ATTEMPTS
        ]
        held = [b for a, b in whole if a]
        missed = [not b for a, b in whole if not a]
        assert first["sensitivity"] == pytest.approx(sum(held) / len(held))
        assert first["specificity"] == pytest.approx(sum(missed) / len(missed))
        assert first["fingerprint"]["model"] == "judge-1"
        assert first["fingerprint"]["origin"] == server.url.removesuffix("/v1")
        assert first["fingerprint"]["votes"] == "1" and first["fingerprint"]["panel"] == []

        refund = next(c for c in first["claims"] if c["claim"] == REFUND)
        refund_pairs = [(d[REFUND], judged(agent)[REFUND]) for agent, d in ATTEMPTS] + [(True, False)]
        assert refund["scenario"] == "refund" and refund["decisions"] == len(refund_pairs)
        assert refund["kappa"] == pytest.approx(kappa(refund_pairs))
        assert refund["agreement"] == pytest.approx(sum(a == b for a, b in refund_pairs) / len(refund_pairs))

        disagreements = sum(a != b for a, b in pairs) + 1
        assert f"Disagreements: {disagreements}" in out
        assert "I will give your money back." not in out and "no refund" in out
        jsonl = written(root)[0].with_suffix(".jsonl").read_text().splitlines()
        line = json.loads(jsonl[0])
        assert len(jsonl) == len(ATTEMPTS) + 1
        assert line["votes"][REFUND] == [{"judge": "judge-1", "pass": True, "grade": None}]
        assert [d["pass"] for d in line["decisions"]] == [True, False, True]

        code, again, err = calibrate(root, server)
        assert code == 0, err
        assert len(server.requests) == len(ATTEMPTS) + 1, "the second calibration asked the judge again"
        assert f"({len(ATTEMPTS) + 1} reused: no judge call)" in again
        second = json.loads(written(root)[1].read_text())
        assert second == first

        code, _, err = calibrate(root, server, "--judge-model", "judge-2")
        assert code == 0, err
        assert len(server.requests) == 2 * (len(ATTEMPTS) + 1), "another judge's decisions were reused"


def test_the_interval_is_seeded_the_same_labels_give_the_same_interval(tmp_path: Path) -> None:
    figures = []
    for name in ("a", "b"):
        root = project(tmp_path / name, labels_yaml(ATTEMPTS))
        with ModelServer(judge) as server:
            code, _, err = calibrate(root, server)
        assert code == 0, err
        figures.append(json.loads(written(root)[0].read_text()))
    assert (figures[0]["kappa_low"], figures[0]["kappa_high"]) == (
        figures[1]["kappa_low"],
        figures[1]["kappa_high"],
    )


def test_calibrate_demo_works_offline_with_the_demo_s_labels(tmp_path: Path) -> None:
    done = convy("calibrate", "--demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "κ" in done.stdout and "false passes" in done.stdout and "Disagreements:" in done.stdout
    assert "stale decision" not in done.stdout, "the demo's labels are current"
    files = sorted((tmp_path / "results" / "calibration").glob("*/calibration.json"))
    assert len(files) == 1
    figures = json.loads(files[0].read_text())
    assert figures["labels"] > 0 and figures["fingerprint"]["model"] == "scripted-judge"
    assert figures["kappa_low"] <= figures["kappa"] <= figures["kappa_high"]
    assert figures["fingerprint"]["origin"] == "demo"
    again = convy("calibrate", "--demo", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "(0 reused: no judge call)" in done.stdout
    reused = re.search(r"on (\d+) labelled attempts \((\d+) reused", again.stdout)
    assert reused is not None and reused.group(1) == reused.group(2), "the demo asked its judge again"
