"""What the runner reads besides the exit code: step outputs (multi-line safe), workflow commands
(escaped), stop-commands tokens, annotations on regressed scenarios, the job summary under 1 MiB."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from convy.compare.comparison import Compared, NoBaseline
from convy.compare.gate import Gate
from convy.compare.summary import Summed
from convy.store.runs import Runs
from convy_action.runner.outputs import OUTPUTS, Annotations, Results, StepOutputs, Stopped, WorkflowCommand
from convy_action.runner.summary import CUT, MIB, JobSummary
from tests.action.folders import all_held, golden
from tests.support.outputs import read_outputs


def test_outputs_survive_newlines_and_text_that_looks_like_a_delimiter(tmp_path: Path) -> None:
    path = tmp_path / "output"
    path.write_text("earlier=1\n")
    tricky = "line one\nEOF\nghadelimiter_x\nverdict=fail"
    StepOutputs(path).write({"run-dir": tricky, "verdict": "pass", "artifact-id": ""})
    assert read_outputs(path.read_text()) == {
        "earlier": "1",
        "run-dir": tricky,
        "verdict": "pass",
        "artifact-id": "",
    }
    assert path.read_text().endswith("\n")


def test_only_the_action_s_outputs_may_be_written(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="passrate"):
        StepOutputs(tmp_path / "o").write({"passrate": "1"})


def test_a_command_s_text_cannot_end_it_or_start_another() -> None:
    command = WorkflowCommand("error", "50% done\n::add-mask::x", (("file", "a,b:c.yaml"), ("line", "3")))
    assert command.text() == "::error file=a%2Cb%3Ac.yaml,line=3::50%25 done%0A::add-mask::x"
    assert WorkflowCommand("endgroup").text() == "::endgroup::"


def test_stop_commands_use_a_fresh_token_that_ends_them() -> None:
    one, two = Stopped.new(), Stopped.new()
    assert one.token != two.token and len(one.token) == 32
    assert one.start == f"::stop-commands::{one.token}" and one.end == f"::{one.token}::"


def test_a_regression_of_a_failed_gate_is_an_error_on_its_file_and_failing_claim_line(tmp_path: Path) -> None:
    now = Summed.of(Runs(golden().parent).one(golden())).summary()
    better = all_held(tmp_path / "better")
    baseline = Summed.of(Runs(better.parent).one(better)).summary()
    comparison = Compared(now, baseline, alpha=0.1).comparison()
    decision = Gate(alpha=0.1).decision(comparison)
    assert (decision.verdict, decision.rule) == ("fail", "max-drop")
    workspace = tmp_path / "repo"
    (annotation,) = Annotations(comparison, decision, workspace / "evals", workspace).commands()
    text = annotation.text()
    assert text.startswith(
        "::error file=evals/scenarios/talk-to-human.yaml,line=8,title=convy%3A talk-to-human regressed"
    )
    assert "0 of 3 attempts held, 3 of 3 in the baseline (p = 0.05)" in text
    assert "Failing claim: The agent offers to connect the user with a human." in text
    outside = Annotations(comparison, decision, Path("/elsewhere/project"), workspace).commands()[0].text()
    assert "file=scenarios/talk-to-human.yaml" in outside


def test_a_drop_within_noise_under_a_passing_gate_is_only_a_notice(tmp_path: Path) -> None:
    now = Summed.of(Runs(golden().parent).one(golden())).summary()
    better = all_held(tmp_path / "better")
    baseline = Summed.of(Runs(better.parent).one(better)).summary()
    comparison = Compared(now, baseline).comparison()
    decision = Gate().decision(comparison)
    assert decision.verdict == "pass" and comparison.scenarios[-1].status == "lower"
    (annotation,) = Annotations(comparison, decision, tmp_path, tmp_path).commands()
    assert annotation.text().startswith("::notice ") and "talk-to-human lower" in annotation.text()


def test_results_give_rates_as_fractions_and_empty_for_what_is_missing(tmp_path: Path) -> None:
    now = Summed.of(Runs(golden().parent).one(golden())).summary()
    alone = Compared(now, NoBaseline(why="none")).comparison()
    values = Results(
        comparison=alone, verdict="pass", run_dir="results/a", report="results/a/report.html"
    ).values()
    assert list(values) == list(OUTPUTS)
    assert values["pass-rate"] == "0.7500" and values["baseline-pass-rate"] == ""
    assert values["artifact-id"] == "" and values["comment-url"] == ""
    compared = Compared(now, now).comparison()
    decision = Gate().decision(compared)
    values = Results(
        comparison=compared, verdict=decision.verdict, run_dir="r", report="r/report.html", artifact_id=42
    ).values()
    assert (values["baseline-pass-rate"], values["artifact-id"], values["verdict"]) == (
        "0.7500",
        "42",
        "pass",
    )


def test_the_job_summary_is_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_text("# Earlier step\n")
    assert JobSummary(path).append("## convy\n\nall good")
    assert path.read_text() == "# Earlier step\n## convy\n\nall good\n\n"


def test_a_job_summary_over_the_limit_is_cut_with_a_note_and_stays_under_it(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    row = "| scenario ✓ | 3 of 3 | 100.0% |\n"
    assert not JobSummary(path).append(row * (2 * MIB // len(row)))
    data = path.read_bytes()
    assert len(data) <= MIB and data.decode().endswith(CUT)
    assert re.search(r"\| 100\.0% \|\n\n\*The summary was cut here", data.decode())
