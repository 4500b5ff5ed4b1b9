"""Many jobs, one verdict (docs/action.md) against the local GitHub: matrix legs kept apart by
`comment-key`, `comment-when` holding back a new comment (never an update)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from tests.action.folders import all_held, golden, zipped
from tests.servers.github import FakeGitHub
from tests.servers.results import Fault
from tests.support.job import PR, START, Job, comments


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


def merged_run(fake: FakeGitHub, tmp_path: Path, minute: int, event: str = "pull_request", **inputs: str):
    """Two shard jobs, then the merge job, of one new workflow run; the merge job."""
    branch = "feature" if event == "pull_request" else "main"
    run = fake.run(head_branch=branch, event=event, created_at=START + timedelta(minutes=minute))
    for k in (1, 2):
        shard = Job(fake, tmp_path, minute, event=event, run=run, job=f"shard-{k}", shard=f"{k}/2", **inputs)
        code, log = shard.in_process()
        assert code == 0, log
        outputs = shard.outputs()
        assert outputs["comment-url"] == "" and outputs["artifact-id"] and outputs["verdict"]
        assert f"shard {k}/2: 2 scenarios played" in log
        summary = shard.summary.read_text()
        assert summary.startswith(f"**convy** shard {k}/2") and "removed" not in summary
        if event == "pull_request":
            assert "convy: baseline: workflow run" in log
            assert summary.count("not played") >= 2, "the other shard's two scenarios"
    merge = Job(fake, tmp_path, minute, event=event, run=run, job="merge", merge="true", **inputs)
    return merge


def test_shards_then_merge_in_one_workflow_run_make_one_run_one_comment_and_the_next_baseline(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    merge = merged_run(fake, tmp_path, 0, event="push")
    assert comments(fake) == []
    code, log = merge.in_process()
    assert code == 0, log
    names = sorted(a.name for a in fake.artifacts_of(merge.run))
    assert names == ["convy-support", "convy-support-shard-1-of-2", "convy-support-shard-2-of-2"]
    outputs = merge.outputs()
    assert outputs["pass-rate"] == "0.7500" and outputs["verdict"] == "pass"
    folder = merge.workspace / outputs["run-dir"]
    run = json.loads((folder / "run.json").read_text())
    assert run["status"] == "finished" and "shard" not in json.dumps(run["spec"]["shard"])
    assert [s["name"] for s in run["spec"]["scenarios"]] == [
        "cancel-subscription",
        "order-status",
        "refund-late-order",
        "talk-to-human",
    ]
    shards = run["spec"]["provenance"]["shards"]
    assert [(s["shard"], s["attempts"], s["status"]) for s in shards] == [
        ("1/2", 6, "finished"),
        ("2/2", 6, "finished"),
    ]
    assert run["spec"]["provenance"]["workflow_run"] == str(merge.run.id)
    lines = [json.loads(line) for line in (folder / "attempts.jsonl").read_text().splitlines()]
    assert sorted((line["scenario"], line["index"]) for line in lines) == sorted(
        (s["name"], i) for s in run["spec"]["scenarios"] for i in range(3)
    )

    pull = merged_run(fake, tmp_path, 10)
    code, log = pull.in_process()
    assert code == 0, log
    assert f"convy: baseline: workflow run {merge.run.id}" in log
    assert pull.outputs()["baseline-pass-rate"] == "0.7500"
    (body,) = comments(fake)
    assert body.startswith("<!-- convy-action:support -->") and "75.0%" in body


def test_a_shard_compares_with_the_whole_baseline_and_exits_0_even_when_the_floor_fails(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    job = Job(fake, tmp_path, 0, shard="2/2", baseline="none", min_pass_rate="0.99")
    code, log = job.in_process()
    assert code == 0, log
    assert job.outputs()["verdict"] == "fail" and comments(fake) == []
    (artifact,) = fake.artifacts_of(job.run)
    assert artifact.name == "convy-support-shard-2-of-2"
    assert not [line for line in log.splitlines() if line.startswith("::error")]


def test_matrix_legs_each_sharded_then_merged_keep_apart(fake: FakeGitHub, tmp_path: Path) -> None:
    run = fake.run(head_branch="feature", event="pull_request", created_at=START)
    for key in ("gpt", "llama"):
        for k in (1, 2):
            job = Job(
                fake, tmp_path, 0, run=run, job=f"{key}-{k}", comment_key=key, shard=f"{k}/2", baseline="none"
            )
            code, log = job.in_process()
            assert code == 0, log
    for key in ("gpt", "llama"):
        merge = Job(
            fake, tmp_path, 0, run=run, job=f"{key}-merge", comment_key=key, merge="true", baseline="none"
        )
        code, log = merge.in_process()
        assert code == 0, log
        assert f"merged 2 shards (convy-support-{key}-shard-1-of-2, convy-support-{key}-shard-2-of-2)" in log
    assert sorted(c.splitlines()[0] for c in comments(fake)) == [
        "<!-- convy-action:support:gpt -->",
        "<!-- convy-action:support:llama -->",
    ]
    assert {"convy-support-gpt", "convy-support-llama"} <= {a.name for a in fake.artifacts_of(run)}


def test_a_merge_missing_a_shard_exits_2_naming_it(fake: FakeGitHub, tmp_path: Path) -> None:
    run = fake.run(head_branch="feature", event="pull_request", created_at=START)
    for k in (1, 3):
        job = Job(fake, tmp_path, 0, run=run, job=f"s{k}", shard=f"{k}/3", baseline="none")
        assert job.in_process()[0] == 0
    merge = Job(fake, tmp_path, 0, run=run, job="merge", merge="true", baseline="none")
    code, log = merge.in_process()
    assert code == 2, log
    assert (
        "::error title=convy%3A configuration error::merge: shard 2/3 is missing: this workflow run has "
        "no artifact convy-support-shard-2-of-3" in log
    )
    assert comments(fake) == [] and "convy-support" not in {a.name for a in fake.artifacts_of(run)}


def test_a_merge_of_shards_played_differently_exits_2_naming_the_difference(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    run = fake.run(head_branch="feature", event="pull_request", created_at=START)
    for k, repeat in ((1, "2"), (2, "3")):
        job = Job(fake, tmp_path, 0, run=run, job=f"s{k}", shard=f"{k}/2", baseline="none", repeat=repeat)
        assert job.in_process()[0] == 0
    merge = Job(fake, tmp_path, 0, run=run, job="merge", merge="true", baseline="none")
    code, log = merge.in_process()
    assert code == 2, log
    assert (
        "merge: shard 2/2 (convy-support-shard-2-of-2) differs from shard 1/2 "
        "(convy-support-shard-1-of-2) in repeat: 3 there, 2 here" in log
    )


def test_a_merge_without_shards_or_with_shard_set_too_exits_2(fake: FakeGitHub, tmp_path: Path) -> None:
    merge = Job(fake, tmp_path, 0, merge="true", baseline="none")
    code, log = merge.in_process()
    assert code == 2, log
    assert "merge: this workflow run has no shard artifact convy-support-shard-<k>-of-<n>" in log
    both = Job(fake, tmp_path, 1, merge="true", shard="1/2")
    code, log = both.in_process()
    assert code == 2 and "merge: and shard are both set" in log
    bad = Job(fake, tmp_path, 2, shard="3/2")
    code, log = bad.in_process()
    assert code == 2 and "::error title=convy%3A configuration error::shard: must be k/n" in log


def test_a_merge_reads_the_shards_through_the_rest_api_where_the_results_service_lists_nothing(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    run = fake.run(head_branch="feature", event="pull_request", created_at=START)
    for k in (1, 2):
        job = Job(fake, tmp_path, 0, run=run, job=f"s{k}", shard=f"{k}/2", baseline="none")
        assert job.in_process()[0] == 0
    unknown = b'{"code":"bad_route","msg":"no handler for ListArtifacts"}'
    fake.results_host.faults.add(Fault(404, times=1, path="ListArtifacts", body=unknown))
    merge = Job(fake, tmp_path, 0, run=run, job="merge", merge="true", baseline="none")
    code, log = merge.in_process()
    assert code == 0, log
    assert "merged 2 shards" in log and len(comments(fake)) == 1
    assert any(s.path.endswith(f"/actions/runs/{run.id}/artifacts?per_page=100") for s in fake.seen)
    assert not any("GetSignedArtifactURL" in s.path for s in fake.results_host.seen)


def test_a_merge_that_can_list_nothing_exits_2_saying_why(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.results_host.faults.add(Fault(404, times=1, path="ListArtifacts", body=b'{"code":"bad_route"}'))
    merge = Job(fake, tmp_path, 0, merge="true", baseline="none", github_token="", comment="false")
    code, log = merge.in_process()
    assert code == 2, log
    assert "merge: the workflow run's artifacts cannot be listed: ListArtifacts: 404" in log


def test_a_merge_job_without_the_project_merges_the_one_run_whose_shards_it_finds(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    run = fake.run(head_branch="feature", event="pull_request", created_at=START)
    for key in ("eu", "us"):
        for k in (1, 2):
            job = Job(fake, tmp_path, 0, run=run, job=f"{key}{k}", shard=f"{k}/2", comment_key=key)
            assert job.in_process()[0] == 0
    bare = Job(fake, tmp_path, 0, run=run, job="merge-eu", merge="true", comment_key="eu", demo="")
    code, log = bare.in_process()
    assert code == 0, log
    assert "convy: the project names no agent; merging the shards of convy-support-eu" in log
    assert "convy-support-eu" in {a.name for a in fake.artifacts_of(run)}
    (body,) = comments(fake)
    assert body.startswith("<!-- convy-action:support:eu -->")
    unkeyed = Job(fake, tmp_path, 0, run=run, job="merge-any", merge="true", demo="")
    code, log = unkeyed.in_process()
    assert code == 2, log
    assert "holds the shards of convy-support-eu, convy-support-us: set artifact-name" in log
