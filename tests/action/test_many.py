"""Many jobs, one verdict (DESIGN §13.4) against the local GitHub: matrix legs kept apart by
`comment-key`, `comment-when` holding back a new comment (never an update)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from tests.action.folders import all_held, golden, zipped
from tests.action.test_pipeline import PR, START, Job, comments
from tests.servers.github import FakeGitHub


def test_two_matrix_legs_of_one_workflow_run_keep_their_own_comment_and_artifact(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    run = fake.run(head_branch="feature", event="pull_request", created_at=START)
    for key in ("gpt", "llama"):
        leg = Job(fake, tmp_path, 0, run=run, job=key, repeat="1", baseline="none", comment_key=key)
        code, log = leg.in_process()
        assert code == 0, log
        assert leg.outputs()["artifact-id"]
    assert sorted(a.name for a in fake.artifacts_of(run)) == ["convy-support-gpt", "convy-support-llama"]
    bodies = comments(fake)
    assert [body.splitlines()[0] for body in bodies] == [
        "<!-- convy-action:support:gpt -->",
        "<!-- convy-action:support:llama -->",
    ]
    assert all(body.count("<!-- convy-action:") == 1 for body in bodies)

    again = fake.run(head_branch="feature", event="pull_request", created_at=START + timedelta(minutes=9))
    leg = Job(fake, tmp_path, 9, run=again, job="gpt", repeat="1", baseline="none", comment_key="gpt")
    code, log = leg.in_process()
    assert code == 0, log
    updated = comments(fake)
    assert len(updated) == 2 and f"/actions/runs/{again.id}" in updated[0]
    assert f"/actions/runs/{again.id}" not in updated[1]


def test_a_keyed_leg_finds_its_own_baseline_artifact(fake: FakeGitHub, tmp_path: Path) -> None:
    keyed = fake.run(created_at=START)
    fake.artifact(keyed, "convy-support-eu", zipped(all_held(tmp_path / "held")))
    plain = fake.run(created_at=START + timedelta(minutes=1))
    fake.artifact(plain, "convy-support", zipped(golden()))
    job = Job(fake, tmp_path, 10, repeat="1", comment_key="eu")
    code, log = job.in_process()
    assert code == 0, log
    assert f"convy: baseline: workflow run {keyed.id}" in log
    assert job.outputs()["baseline-pass-rate"] == "1.0000"


def test_an_unsafe_key_is_made_safe_in_the_marker_and_the_artifact_name(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    job = Job(fake, tmp_path, 0, repeat="1", baseline="none", comment_key="openai/gpt-4o mini")
    code, log = job.in_process()
    assert code == 0, log
    (artifact,) = fake.artifacts_of(job.run)
    assert artifact.name == "convy-support-openai_gpt-4o_mini"
    assert comments(fake)[0].startswith("<!-- convy-action:support:openai_gpt-4o_mini -->\n")


def test_comment_when_failed_creates_no_comment_for_a_pass_but_updates_an_existing_one(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    job = Job(fake, tmp_path, 0, repeat="1", baseline="none", comment_when="failed")
    code, log = job.in_process()
    assert code == 0, log
    assert comments(fake) == [] and job.outputs()["comment-url"] == ""
    assert "convy: no pull request comment: comment-when: failed, and the gate passed" in log
    assert job.summary.read_text().startswith("<!-- convy-action:support -->")

    ours = fake.comment(PR, "<!-- convy-action:support -->\nan earlier failure")
    job = Job(fake, tmp_path, 5, repeat="1", baseline="none", comment_when="failed")
    code, log = job.in_process()
    assert code == 0, log
    assert len(comments(fake)) == 1 and "an earlier failure" not in ours.body
    assert job.outputs()["comment-url"].endswith(f"#issuecomment-{ours.id}")


def test_comment_when_failed_creates_one_when_the_gate_fails(fake: FakeGitHub, tmp_path: Path) -> None:
    job = Job(fake, tmp_path, 0, repeat="1", baseline="none", comment_when="failed", min_pass_rate="0.9")
    code, log = job.in_process()
    assert code == 1, log
    (body,) = comments(fake)
    assert body.startswith("<!-- convy-action:support -->") and "min-pass-rate" in body


def test_comment_when_changed_holds_back_a_pass_with_nothing_changed(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    first = Job(fake, tmp_path, 0, event="push", repeat="1", comment_when="changed")
    code, log = first.in_process()
    assert code == 0, log
    new = Job(fake, tmp_path, 5, repeat="1", comment_when="changed", baseline="none")
    code, log = new.in_process()
    assert code == 0, log
    assert len(comments(fake)) == 1, "no baseline: every scenario is new, so it is a change"
    fake.comments.clear()
    same = Job(fake, tmp_path, 10, repeat="1", comment_when="changed")
    code, log = same.in_process()
    assert code == 0, log
    assert f"convy: baseline: workflow run {first.run.id}" in log
    assert comments(fake) == []
    assert "comment-when: changed, the gate passed and no scenario changed" in log


def test_comment_when_refuses_an_unknown_value_naming_the_input(fake: FakeGitHub, tmp_path: Path) -> None:
    job = Job(fake, tmp_path, 0, comment_when="sometimes")
    fake.seen.clear()
    code, log = job.in_process()
    assert code == 2
    assert (
        "::error title=convy%3A configuration error::comment-when (INPUT_COMMENT-WHEN): must be one of "
        "always, changed, failed" in log
    )
    assert fake.seen == []
