"""Shards and `convy merge` (docs/action.md, decision 14): the slice each shard plays, and merging shards' run
folders into one normal run — refused, naming the difference, when they do not make one run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from convy.errors import ConfigurationError
from convy.project.shard import Slice
from tests.support.command import convy, lines

DEMO_ORDER = ["cancel-subscription", "order-status", "refund-late-order", "talk-to-human"]


@given(count=st.integers(1, 12), scenarios=st.integers(0, 40))
def test_every_scenario_belongs_to_exactly_one_shard_by_its_position(count: int, scenarios: int) -> None:
    items = list(range(scenarios))
    slices = [Slice(k, count).chosen(items) for k in range(1, count + 1)]
    assert sorted(i for chosen in slices for i in chosen) == items
    for k, chosen in enumerate(slices, start=1):
        assert all(i % count + 1 == k for i in chosen)


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0", "-1/2", "1/2/3"])
def test_a_bad_shard_names_the_setting(text: str) -> None:
    with pytest.raises(ConfigurationError, match=r"^shard: must be k/n"):
        Slice.read(text)


def shards(tmp_path: Path, count: int, *extra: str) -> list[Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    folders = []
    for k in range(1, count + 1):
        results = tmp_path / f"shard-{k}"
        done = convy(
            "run", "--demo", "--shard", f"{k}/{count}", "--results", str(results), *extra, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        (folder,) = (results / "support").iterdir()
        folders.append(folder)
    return folders


def test_shards_play_their_slices_and_merge_into_one_normal_run(tmp_path: Path) -> None:
    one, two, three = shards(tmp_path, 3)
    spec = json.loads((one / "run.json").read_text())["spec"]
    assert [s["name"] for s in spec["scenarios"]] == ["cancel-subscription", "talk-to-human"]
    assert spec["shard"]["index"] == 1 and spec["shard"]["count"] == 3
    assert [s["name"] for s in spec["shard"]["scenarios"]] == DEMO_ORDER
    assert {line["scenario"] for line in lines(three)} == {"refund-late-order"}
    assert spec["left_out"] == ["order-status", "refund-late-order"]

    merged = tmp_path / "merged"
    done = convy("merge", str(three), str(one), str(two), "--to", str(merged), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "merged 3 shards" in done.stdout and "75.0% (46.8–91.1%)" in done.stdout
    run = json.loads((merged / "run.json").read_text())
    assert run["status"] == "finished" and run["spec"]["shard"] == {} and run["spec"]["left_out"] == []
    assert [s["name"] for s in run["spec"]["scenarios"]] == DEMO_ORDER
    assert [(s["shard"], s["run"], s["attempts"]) for s in run["spec"]["provenance"]["shards"]] == [
        ("1/3", one.name, 6),
        ("2/3", two.name, 3),
        ("3/3", three.name, 3),
    ]
    attempts = [(line["scenario"], line["index"]) for line in lines(merged)]
    assert attempts == [(name, i) for name in DEMO_ORDER for i in range(3)]
    assert (merged / "report.html").exists() and (merged / "comment.md").exists()

    again = convy("compare", str(merged), str(merged), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    report = convy("report", str(merged), cwd=tmp_path)
    assert report.returncode == 0, report.stderr


def test_a_merged_run_gates_against_a_baseline(tmp_path: Path) -> None:
    folders = shards(tmp_path, 2)
    baseline = tmp_path / "baseline"
    assert convy("run", "--demo", "--results", str(baseline), cwd=tmp_path).returncode == 0
    (before,) = (baseline / "support").iterdir()
    done = convy(
        "merge", *map(str, folders), "--to", str(tmp_path / "m"), "--baseline", str(before), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "m" / "comparison.html").exists()
    alone = convy("compare", str(folders[0]), str(before), cwd=tmp_path)
    assert alone.returncode == 0, alone.stderr
    assert "not played" in alone.stdout and "removed" not in alone.stdout


def refused(tmp_path: Path, *folders: Path) -> str:
    target = tmp_path / "refused"
    done = convy("merge", *map(str, folders), "--to", str(target), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert not target.exists() or not any(target.iterdir())
    return done.stderr


def test_merging_refuses_a_missing_shard_a_doubled_one_and_a_run_that_is_no_shard(tmp_path: Path) -> None:
    one, two, three = shards(tmp_path, 3)
    assert "merge: shard 2/3 is missing (2 of 3 shards given)" in refused(tmp_path, one, three)
    copy = tmp_path / "copy" / "support" / one.name
    shutil.copytree(one, copy)
    assert f"merge: shard 1/3 ({one}) and shard 1/3 ({copy}) are the same shard" in refused(
        tmp_path, one, copy, two, three
    )
    whole = tmp_path / "whole"
    assert convy("run", "--demo", "--results", str(whole), cwd=tmp_path).returncode == 0
    (plain,) = (whole / "support").iterdir()
    assert f"merge: {plain} is not a shard: it was played without `shard`" in refused(tmp_path, plain, one)
    other = shards(tmp_path / "two", 2)
    assert "is one of 2 shards" in refused(tmp_path, one, other[1], three)


def test_merging_refuses_shards_played_differently_naming_the_difference(tmp_path: Path) -> None:
    one, two = shards(tmp_path, 2)
    run = json.loads((two / "run.json").read_text())
    run["spec"]["judge_model"] = "another-judge"
    (two / "run.json").write_text(json.dumps(run))
    error = refused(tmp_path, one, two)
    assert f"shard 2/2 ({two}) differs from shard 1/2 ({one}) in judge_model: 'another-judge' there" in error

    run["spec"]["judge_model"] = "scripted-judge"
    run["spec"]["shard"]["scenarios"][0]["fingerprint"] = "0000000000000000"
    (two / "run.json").write_text(json.dumps(run))
    error = refused(tmp_path, one, two)
    assert "was played with other scenarios than shard 1/2" in error and "'cancel-subscription'" in error


def test_merging_refuses_two_shards_holding_the_same_attempt(tmp_path: Path) -> None:
    one, two = shards(tmp_path, 2)
    stray = next(line for line in (one / "attempts.jsonl").read_text().splitlines())
    run = json.loads((two / "run.json").read_text())
    run["spec"]["scenarios"] = run["spec"]["shard"]["scenarios"]
    (two / "run.json").write_text(json.dumps(run))
    with (two / "attempts.jsonl").open("a") as attempts:
        attempts.write(stray + "\n")
    doubled = json.loads(stray)
    expected = f"both hold attempt {doubled['index']} of scenario {doubled['scenario']!r}"
    assert expected in refused(tmp_path, one, two)


def test_merging_refuses_a_target_that_holds_files(tmp_path: Path) -> None:
    one, two = shards(tmp_path, 2)
    target = tmp_path / "full"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    done = convy("merge", str(one), str(two), "--to", str(target), cwd=tmp_path)
    assert done.returncode == 2 and "exists and is not empty" in done.stderr
    assert (target / "keep.txt").read_text() == "mine"


def test_the_baseline_attempts_each_shard_judged_again_are_kept_in_the_merged_run(tmp_path: Path) -> None:
    one, two = shards(tmp_path, 2)
    for shard in (one, two):
        first = (shard / "attempts.jsonl").read_text().splitlines()[0]
        record = {
            "baseline": "support@2026-11-30T18:30:00Z",
            "judge_model": "judge-2",
            "outcome": json.loads(first),
        }
        (shard / "rejudged.jsonl").write_text(json.dumps(record))
    merged = tmp_path / "merged"
    done = convy("merge", str(one), str(two), "--to", str(merged), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    from convy.store.journal import RunJournal

    again = RunJournal(merged).rejudged("support@2026-11-30T18:30:00Z")
    assert sorted(r.outcome.scenario for r in again) == sorted(
        json.loads((s / "attempts.jsonl").read_text().splitlines()[0])["scenario"] for s in (one, two)
    )
