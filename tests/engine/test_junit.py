"""The JUnit XML file (docs/action.md, setting `junit`): written by `convy run`, `convy compare` and
`convy merge`, one test suite (the agent) with one test case per scenario, a failure where the
scenario regressed, fell or held in none of its judged attempts, skipped where it was not played, the
pass rates and p as properties; valid against the common JUnit schema (tests/data/junit) and read
back with junitparser, whatever the agent or the judge wrote."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import junitparser

from convy.draw.junit import JUnitXml
from tests.support.command import convy
from tests.support.junit import read
from tests.support.summaries import judged, run


def cases(suite: junitparser.TestSuite) -> dict[str, junitparser.TestCase]:
    return {case.name: case for case in suite}


def properties(suite: junitparser.TestSuite) -> dict[str, str]:
    return {prop.name: prop.value for prop in suite.properties()}


def demo_runs(tmp_path: Path) -> list[Path]:
    return sorted(p for p in (tmp_path / "results" / "support").iterdir() if p.is_dir())


def later_run(tmp_path: Path, first: Path) -> Path:
    """The run made after `first`: two runs in the same second sort by their random suffix, not by time."""
    (later,) = set(demo_runs(tmp_path)) - {first}
    return later


def test_a_demo_run_writes_a_valid_junit_file_with_the_scenario_that_held_nowhere_failing(
    tmp_path: Path,
) -> None:
    done = convy("run", "--demo", "--junit", "reports/out.xml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    path = tmp_path / "reports" / "out.xml"
    assert "convy: wrote reports/out.xml" in done.stdout
    suite = read(path)
    assert (suite.name, suite.tests, suite.failures, suite.errors, suite.skipped) == ("support", 4, 1, 0, 0)
    by_name = cases(suite)
    assert sorted(by_name) == ["cancel-subscription", "order-status", "refund-late-order", "talk-to-human"]
    assert all(case.classname == "support" and case.time > 0 for case in by_name.values())
    assert abs(suite.time - sum(case.time for case in by_name.values())) < 0.01
    (failure,) = by_name["talk-to-human"].result
    assert isinstance(failure, junitparser.Failure)
    assert failure.type == "nothing-held"
    assert failure.message == "nothing held: 0 of 3 judged attempts held"
    assert "The agent offers to connect the user with a human." in (failure.text or "")
    assert all(by_name[name].is_passed for name in by_name if name != "talk-to-human")
    shown = properties(suite)
    assert shown["pass-rate"] == "0.7500" and shown["verdict"] == "pass" and shown["rule"] == "floor-only"
    assert shown["talk-to-human: pass-rate"] == "0.0000" and "p" not in shown


def test_a_failing_regression_fails_each_fallen_scenario_with_counts_p_and_reasons(tmp_path: Path) -> None:
    assert convy("run", "--demo", cwd=tmp_path).returncode == 0
    (first,) = demo_runs(tmp_path)
    done = convy(
        "run", "--demo", "--baseline", str(first), "--agent-answer", "reply.message", "--fail-fast=false",
        "--junit", "junit.xml", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    suite = read(tmp_path / "junit.xml")
    assert (suite.tests, suite.failures, suite.skipped) == (4, 4, 0)
    by_name = cases(suite)
    (fallen,) = by_name["order-status"].result
    assert isinstance(fallen, junitparser.Failure)
    assert fallen.type in ("regressed", "lower")
    assert fallen.message.startswith(f"{fallen.type}: 0 of 3 judged attempts held (baseline 3 of 3), p = ")
    assert "the agent failed 3 of 3 attempts" in (fallen.text or "")
    (held_nowhere,) = by_name["talk-to-human"].result
    assert held_nowhere.type == "nothing-held"
    shown = properties(suite)
    assert shown["verdict"] == "fail" and shown["pass-rate"] == "0.0000"
    assert shown["baseline-pass-rate"] == "0.7500" and 0 < float(shown["p"]) < 0.05
    assert shown["order-status: baseline-pass-rate"] == "1.0000" and float(shown["order-status: p"]) > 0

    later = later_run(tmp_path, first)
    again = convy("compare", str(later), str(first), "--junit", "again.xml", cwd=tmp_path)
    assert again.returncode == 1
    assert (tmp_path / "again.xml").read_text() == (tmp_path / "junit.xml").read_text()


def test_a_scenario_left_out_is_skipped_with_or_without_a_baseline(tmp_path: Path) -> None:
    alone = convy("run", "--demo", "--match", "order-status", "--junit", "alone.xml", cwd=tmp_path)
    assert alone.returncode == 0, alone.stdout + alone.stderr
    suite = read(tmp_path / "alone.xml")
    assert (suite.tests, suite.failures, suite.skipped) == (4, 0, 3)
    (skipped,) = cases(suite)["talk-to-human"].result
    assert isinstance(skipped, junitparser.Skipped) and skipped.message.startswith("not played")
    assert cases(suite)["order-status"].is_passed

    (first,) = demo_runs(tmp_path)
    paired = convy("run", "--demo", "--match", "order-status", "--baseline", str(first), cwd=tmp_path)
    assert paired.returncode == 0, paired.stdout + paired.stderr
    second = later_run(tmp_path, first)
    compared = convy("compare", str(second), str(first), "--junit", "paired.xml", cwd=tmp_path)
    assert compared.returncode == 0, compared.stdout + compared.stderr
    suite = read(tmp_path / "paired.xml")
    assert (suite.tests, suite.failures, suite.skipped) == (4, 0, 3)


def test_merge_writes_the_merged_run_s_junit_file(tmp_path: Path) -> None:
    for part in ("1/2", "2/2"):
        done = convy("run", "--demo", "--shard", part, cwd=tmp_path)
        assert done.returncode in (0, 1), done.stdout + done.stderr
    shards = [str(folder) for folder in demo_runs(tmp_path)]
    merged = tmp_path / "merged"
    done = convy("merge", *shards, "--to", str(merged), "--junit", "merged.xml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    suite = read(tmp_path / "merged.xml")
    assert (suite.tests, suite.failures, suite.skipped) == (4, 1, 0)


def test_no_junit_setting_writes_no_file(tmp_path: Path) -> None:
    done = convy("run", "--demo", cwd=tmp_path)
    assert done.returncode == 0
    assert list(tmp_path.rglob("*.xml")) == [] and "JUnit" not in done.stdout


def test_untrusted_text_is_escaped_and_stripped_of_what_xml_cannot_hold(tmp_path: Path) -> None:
    claim = 'It says <b>"hi"</b> & ]]> \x00\x1b[31m\x7f\ud800 ok'
    reason = "The judge:\x0b </failure><testcase name='x'/> \ufffe\x08 fine\nnext line"
    now = run(
        {"weird\x01 <name> &": [False, False], "fine": [True, True]},
        agent="bot\x02<&>",
        claim=claim,
        reason=reason,
    )
    before = run({"weird\x01 <name> &": [True, True], "fine": [True, True]}, agent="bot\x02<&>")
    comparison, decision = judged(now, before)
    path = tmp_path / "hostile.xml"
    path.write_text(JUnitXml(comparison=comparison, decision=decision).text(), encoding="utf-8")
    suite = read(path)
    assert suite.name == "bot<&>"
    by_name = cases(suite)
    assert sorted(by_name) == ["fine", "weird <name> &"]
    (failure,) = by_name["weird <name> &"].result
    assert 'It says <b>"hi"</b> & ]]> [31m ok' in (failure.text or "")
    assert "</failure><testcase name='x'/>  fine\nnext line" in (failure.text or "")
    assert len(list(ElementTree.parse(path).getroot().iter("testcase"))) == 2
