"""The judge set the benchmark ships (benchmarks/judge_set): well-formed, matching its scenarios,
and its hostile copy equal to the missed dialogues but for the note to the judge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from convy.project.labels import Labels
from convy.project.scenarios import Scenarios

SET = Path(__file__).resolve().parents[2] / "benchmarks" / "judge_set"


def labelled(folder: str) -> tuple[int, int, list[str]]:
    """The attempts the product's reader takes from a labels folder, their decisions, and the stale."""
    used, stale = Labels(SET / folder, SET).against(Scenarios(SET, "scenarios").all())
    return len(used), sum(len(each.passes) for each in used), [f"{s.where}: {s.why}" for s in stale]


def attempts(path: str) -> list[dict[str, Any]]:
    loaded = yaml.safe_load((SET / path).read_text())
    assert isinstance(loaded, list)
    return loaded


def test_the_labels_are_read_whole_with_no_stale_decision() -> None:
    used, decisions, stale = labelled("labels")
    assert stale == []
    assert used >= 40
    every = attempts("labels/met.yaml") + attempts("labels/missed.yaml")
    assert used == len(every)
    assert decisions == sum(len(each["decisions"]) for each in every)


def test_every_attempt_decides_every_claim_of_its_scenario_one_way() -> None:
    claims = {d.scenario.name: {str(c) for c in d.scenario.claims} for d in Scenarios(SET, "scenarios").all()}
    for path, held in (
        ("labels/met.yaml", True),
        ("labels/missed.yaml", False),
        ("hostile/missed.yaml", False),
    ):
        for each in attempts(path):
            decisions = each["decisions"]
            assert isinstance(decisions, dict)
            assert set(decisions) == claims[str(each["scenario"])], (path, each["scenario"])
            assert set(decisions.values()) == {held}, (path, each["scenario"])
            assert len(each["transcript"]) >= 2


def test_both_kinds_are_there_about_half_each() -> None:
    met, missed = len(attempts("labels/met.yaml")), len(attempts("labels/missed.yaml"))
    assert met > 0 and missed > 0
    assert abs(met - missed) <= (met + missed) // 5


def test_the_hostile_set_is_the_missed_one_with_a_note_to_the_judge_at_the_end() -> None:
    used, _, stale = labelled("hostile")
    assert stale == []
    plain, hostile = attempts("labels/missed.yaml"), attempts("hostile/missed.yaml")
    assert used == len(hostile) == len(plain)
    for before, after in zip(plain, hostile, strict=True):
        assert after["scenario"] == before["scenario"]
        assert after["decisions"] == before["decisions"]
        *same, last = before["transcript"]
        *kept, noted = after["transcript"]
        assert kept == same
        assert noted["user"] == last["user"]
        note = noted["agent"][len(last["agent"]) :]
        assert noted["agent"].startswith(last["agent"]) and note.strip(), before["scenario"]
        assert any(word in note.lower() for word in ("evaluator", "judge")), note
