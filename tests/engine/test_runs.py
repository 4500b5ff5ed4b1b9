"""Run folders read back, from the golden folders every format version wrote (kept forever)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from convy.compare.statistics import Rate
from convy.compare.summary import Summed
from convy.store.journal import NewerFormat
from convy.store.runs import Runs

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def test_a_finished_format_1_folder_reads_back_with_its_figures() -> None:
    summary = Summed.of(Runs(GOLDEN).one(GOLDEN / "format-1-finished")).summary()
    assert (summary.status, summary.attempts, summary.tally.held, summary.tally.judged) == (
        "finished",
        12,
        9,
        12,
    )
    assert isinstance(summary.rate, Rate) and summary.rate.text() == "75.0% (46.8–91.1%)"
    failing = {s.name: [c.claim for c in s.failing] for s in summary.scenarios if s.failing}
    assert failing == {"talk-to-human": ["The agent offers to connect the user with a human."]}


def test_an_interrupted_folder_reads_back_what_it_holds() -> None:
    summary = Summed.of(Runs(GOLDEN).one(GOLDEN / "format-1-interrupted")).summary()
    assert (summary.status, summary.attempts, summary.expected) == ("interrupted", 5, 12)


def test_a_torn_last_line_is_skipped_and_reported() -> None:
    run = Runs(GOLDEN).one(GOLDEN / "format-1-torn")
    summary = Summed.of(run).summary()
    assert run.torn() and summary.torn and summary.attempts == 7


def test_a_newer_format_is_refused_and_listed_as_broken(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(GOLDEN / "format-99", results / "support" / "run-99")
    shutil.copytree(GOLDEN / "format-1-finished", results / "support" / "run-1")
    runs = Runs(results)
    with pytest.raises(NewerFormat, match="format 99"):
        runs.one(results / "support" / "run-99")
    assert [Path(b.folder).name for b in runs.broken()] == ["run-99"]
    assert [r.folder.name for r in runs.readable()] == ["run-1"]


def test_a_broken_run_json_is_listed_with_its_reason(tmp_path: Path) -> None:
    folder = tmp_path / "results" / "a" / "r"
    folder.mkdir(parents=True)
    (folder / "run.json").write_text("{not json")
    broken = Runs(tmp_path / "results").broken()
    assert len(broken) == 1 and "run.json cannot be read" in broken[0].reason
