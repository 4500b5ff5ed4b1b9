"""The whole action as the runner drives it: `python -m convy_action` with the environment and files
of a Docker container action (INPUT_* with hyphens, GITHUB_* pointing at the local GitHub, an event
file, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY, the runtime token of the results service) playing the
demo. First the subprocess, three pushes to one pull request; then the faults, in process with
short retries."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from convy_action.action import Action
from tests.action.folders import all_held, golden, hostile, zipped
from tests.servers.github import BOT_LOGIN, FakeGitHub
from tests.servers.results import Fault
from tests.support.job import FAST, PR, START, Job, cancelled, comments
from tests.support.outputs import read_outputs

MARKER = "<!-- convy-action:support -->"


def test_three_pushes_to_a_pull_request_upload_compare_and_keep_one_comment(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    first = Job(fake, tmp_path, 0, **{"baseline-branch": "feature"})
    done = first.subprocess()
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = first.outputs()
    assert outputs["verdict"] == "pass" and outputs["pass-rate"] == "0.7500"
    assert outputs["baseline-pass-rate"] == ""
    assert (
        outputs["run-dir"].startswith("results/support/") and (first.workspace / outputs["report"]).is_file()
    )
    (artifact,) = fake.artifacts_of(first.run)
    assert artifact.name == "convy-support" and outputs["artifact-id"] == str(artifact.id)
    assert comments(fake)[0].startswith(MARKER) and len(comments(fake)) == 1
    assert "no baseline" in comments(fake)[0]
    assert outputs["comment-url"].endswith(f"#issuecomment-{fake.comments[0].id}")
    spec = json.loads((first.workspace / outputs["run-dir"] / "run.json").read_text())["spec"]
    assert spec["provenance"] == {
        "repository": fake.repository,
        "sha": first.run.head_sha,
        "ref": f"refs/pull/{PR}/merge",
        "workflow_run": str(first.run.id),
        "pull_request": PR,
    }

    second = Job(fake, tmp_path, 10, **{"baseline-branch": "feature"})
    done = second.subprocess()
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = second.outputs()
    assert outputs["baseline-pass-rate"] == "0.7500" and outputs["verdict"] == "pass"
    assert f"baseline: workflow run {first.run.id}" in done.stdout
    assert len(comments(fake)) == 1 and comments(fake)[0].startswith(MARKER)
    assert f"/actions/runs/{second.run.id}" in comments(fake)[0]
    assert any(seen.method == "PATCH" for seen in fake.seen)
    first_body = comments(fake)[0]

    third = Job(fake, tmp_path, 20, **{"baseline-branch": "feature"})
    done = third.subprocess()
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"baseline: workflow run {second.run.id}" in done.stdout
    (body,) = comments(fake)
    assert body.startswith(MARKER) and body != first_body and f"/actions/runs/{third.run.id}" in body
    assert fake.comments[0].user["login"] == BOT_LOGIN
    summary = third.summary.read_text()
    assert summary.startswith(MARKER) and "Pass rate 75.0%" in summary
    assert third.outputs()["comment-url"] == first.outputs()["comment-url"]


def lines_between_stop_commands(log: str) -> list[str]:
    """The log's lines printed while workflow commands were off."""
    inside: list[str] = []
    token = ""
    for line in log.splitlines():
        if token:
            if line == f"::{token}::":
                token = ""
            else:
                inside.append(line)
        elif line.startswith("::stop-commands::"):
            token = line.removeprefix("::stop-commands::")
    assert not token, "stop-commands never ended"
    return inside


def test_a_pull_request_compares_with_the_base_branch_run_of_its_event(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    push = Job(fake, tmp_path, 0, event="push", repeat="1")
    code, log = push.in_process()
    assert code == 0, log
    assert "no pull request comment: the event is not about a pull request" in log and comments(fake) == []
    assert push.outputs()["artifact-id"] == str(fake.artifacts_of(push.run)[0].id)
    pull = Job(fake, tmp_path, 10, repeat="1")
    code, log = pull.in_process()
    assert code == 0, log
    assert f"convy: baseline: workflow run {push.run.id}" in log
    assert pull.outputs()["baseline-pass-rate"] == "0.7500"
    assert len(comments(fake)) == 1


def test_secrets_are_masked_first_and_agent_text_is_shown_with_commands_off(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    job = Job(fake, tmp_path, 0, **{"model-key": "sk-demo-unused-key", "baseline": "none"})
    code, log = job.in_process()
    assert code == 0, log
    assert set(log.splitlines()[:2]) == {"::add-mask::sk-demo-unused-key", f"::add-mask::{fake.token}"}
    inside = lines_between_stop_commands(log)
    assert any(line.startswith("[12/12]") for line in inside)
    assert MARKER in inside and any("Nothing the agent said shows it." in line for line in inside)
    outside = [line for line in log.splitlines() if line not in inside]
    assert not any("Nothing the agent said shows it." in line for line in outside)


def test_an_expired_baseline_gives_way_to_the_next_older_run(fake: FakeGitHub, tmp_path: Path) -> None:
    fine = fake.run(created_at=START)
    fake.artifact(fine, "convy-support", zipped(all_held(tmp_path / "held")))
    gone = fake.run(created_at=START + timedelta(minutes=5))
    fake.artifact(gone, "convy-support", zipped(golden()), expired=True)
    job = Job(fake, tmp_path, 10, repeat="1")
    code, log = job.in_process()
    assert code == 0, log
    assert (
        f"::warning::baseline: skipped workflow run {gone.id}: its artifact 'convy-support' has expired"
        in log
    )
    assert f"convy: baseline: workflow run {fine.id}" in log
    assert job.outputs()["baseline-pass-rate"] == "1.0000"


def test_unfinished_and_hostile_baselines_are_skipped_with_a_warning_each(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    fine = fake.run(created_at=START)
    fake.artifact(fine, "convy-support", zipped(golden()))
    escaping = fake.run(created_at=START + timedelta(minutes=1))
    fake.artifact(escaping, "convy-support", hostile(golden()))
    interrupted = fake.run(created_at=START + timedelta(minutes=2))
    fake.artifact(interrupted, "convy-support", zipped(golden("format-1-interrupted")))
    job = Job(fake, tmp_path, 10, repeat="1")
    code, log = job.in_process()
    assert code == 0, log
    warnings = [line for line in log.splitlines() if line.startswith("::warning::baseline:")]
    assert len(warnings) == 2
    assert f"workflow run {interrupted.id}: its run did not finish (status interrupted)" in warnings[0]
    assert f"workflow run {escaping.id}: its artifact is refused" in warnings[1] and "escapes" in warnings[1]
    assert f"convy: baseline: workflow run {fine.id}" in log
    assert not list(tmp_path.rglob("escaped.txt"))


def test_a_regression_fails_the_gate_and_annotates_the_claim(fake: FakeGitHub, tmp_path: Path) -> None:
    better = fake.run(created_at=START)
    fake.artifact(better, "convy-support", zipped(all_held(tmp_path / "held", repeat=5)))
    job = Job(fake, tmp_path, 10, repeat="5")
    code, log = job.in_process()
    assert code == 1, log
    assert job.outputs()["verdict"] == "fail"
    (annotation,) = [line for line in log.splitlines() if line.startswith("::error ")]
    assert annotation.startswith(
        "::error file=scenarios/talk-to-human.yaml,line=8,title=convy%3A talk-to-human"
    )
    assert "0 of 5 attempts held, 5 of 5 in the baseline" in annotation
    assert "max-drop" in comments(fake)[0] and comments(fake)[0].startswith(MARKER)


def test_our_comment_on_the_second_page_is_updated_not_duplicated(fake: FakeGitHub, tmp_path: Path) -> None:
    for number in range(105):
        fake.comment(PR, f"review {number}", login="reviewer")
    ours = fake.comment(PR, f"{MARKER}\nan older run", login=BOT_LOGIN)
    fake.comment(PR, "one more review", login="reviewer")
    job = Job(fake, tmp_path, 10, repeat="1", baseline="none")
    code, log = job.in_process()
    assert code == 0, log
    assert len(comments(fake)) == 107 and ours.body.startswith(MARKER) and "an older run" not in ours.body
    assert job.outputs()["comment-url"].endswith(f"#issuecomment-{ours.id}")


def test_rate_limits_with_retry_after_are_waited_out(fake: FakeGitHub, tmp_path: Path) -> None:
    fine = fake.run(created_at=START)
    fake.artifact(fine, "convy-support", zipped(golden()))
    fake.fail(429, method="GET", path="/actions/workflows/", retry_after="1")
    fake.fail(
        403,
        method="POST",
        path="/comments",
        message="You have exceeded a secondary rate limit",
        retry_after="1",
    )
    job = Job(fake, tmp_path, 10, repeat="1")
    code, log = job.in_process()
    assert code == 0, log
    assert f"convy: baseline: workflow run {fine.id}" in log
    assert len(comments(fake)) == 1
    workflow_lists = [s for s in fake.seen if s.method == "GET" and "/actions/workflows/" in s.path]
    assert len(workflow_lists) == 2 and len([s for s in fake.seen if s.method == "POST"]) == 2


def test_rate_limits_that_never_end_are_bounded_and_the_gate_still_decides(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    fake.fail(429, times=50, method="GET", path="/comments", retry_after="0")
    job = Job(fake, tmp_path, 10, repeat="1", baseline="none")
    code, log = job.in_process()
    assert code == 0, log
    assert "::warning::the pull request comment could not be posted (429" in log
    assert len([s for s in fake.seen if "/comments" in s.path]) == FAST.attempts
    assert "The pull request comment could not be posted" in job.summary.read_text()


def test_failing_uploads_are_retried_then_warned_and_the_gate_still_decides(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    fake.results_host.faults.add(
        Fault(500, times=50, path="CreateArtifact", body=b'{"code":"internal","msg":"boom"}')
    )
    job = Job(fake, tmp_path, 10, repeat="1", baseline="none")
    code, log = job.in_process()
    assert code == 0, log
    assert "::warning::the run folder was not uploaded: the upload failed: CreateArtifact: 500" in log
    creates = [s for s in fake.results_host.seen if s.path.endswith("/CreateArtifact")]
    assert len(creates) == FAST.attempts
    assert job.outputs()["artifact-id"] == "" and job.outputs()["verdict"] == "pass"
    assert comments(fake) and "report artifact: not uploaded" in comments(fake)[0]


def test_a_fork_s_read_only_token_puts_the_comment_in_the_job_summary(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    fake.tokens[fake.token].write = False
    job = Job(fake, tmp_path, 10, repeat="1", baseline="none")
    code, log = job.in_process()
    assert code == 0, log
    assert "::warning::the pull request comment could not be posted (403" in log and "fork" in log
    summary = job.summary.read_text()
    assert "The pull request comment could not be posted" in summary and MARKER in summary
    assert comments(fake) == [] and job.outputs()["comment-url"] == ""


def test_without_the_runtime_token_nothing_is_uploaded_and_the_run_goes_on(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    job = Job(fake, tmp_path, 10, repeat="1", baseline="none")
    del job.environ["ACTIONS_RUNTIME_TOKEN"]
    code, log = job.in_process()
    assert code == 0, log
    assert "::warning::ACTIONS_RUNTIME_TOKEN or ACTIONS_RESULTS_URL is not set" in log
    assert fake.results_host.seen == [] and job.outputs()["artifact-id"] == ""
    assert len(comments(fake)) == 1


def test_retention_is_capped_to_the_repository_s(fake: FakeGitHub, tmp_path: Path) -> None:
    job = Job(fake, tmp_path, 10, repeat="1", baseline="none", comment="false")
    job.environ |= {"INPUT_RETENTION-DAYS": "400", "GITHUB_RETENTION_DAYS": "30"}
    code, log = job.in_process()
    assert code == 0, log
    assert (
        "::warning::retention-days 400 is more than the repository allows; the artifact is kept 30 days"
        in log
    )
    (stored,) = fake.artifacts_of(job.run)
    assert timedelta(days=29) < stored.expires_at - datetime.now(UTC) <= timedelta(days=30)
    assert comments(fake) == []


def test_a_named_baseline_run_is_used_and_a_missing_one_stops_before_playing(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    named = fake.run(created_at=START, head_branch="release")
    fake.artifact(named, "convy-support", zipped(all_held(tmp_path / "held")))
    job = Job(fake, tmp_path, 10, repeat="1", baseline=str(named.id))
    code, log = job.in_process()
    assert code == 0, log
    assert job.outputs()["baseline-pass-rate"] == "1.0000"
    missing = Job(fake, tmp_path, 20, baseline="424242")
    code, log = missing.in_process()
    assert code == 2
    assert "::error title=convy%3A configuration error::baseline: workflow run 424242 does not exist" in log
    assert not (missing.workspace / "results").exists()


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"INPUT_GITHUB-TOKEN": ""}, "github-token"),
        ({"INPUT_MAX-DORP": "0.1"}, "INPUT_MAX-DORP"),
        ({"INPUT_REPEAT": "0"}, "repeat (INPUT_REPEAT)"),
        ({"INPUT_MAX-DROP": "2"}, "max-drop (INPUT_MAX-DROP)"),
        ({"INPUT_BASELINE": "results/old"}, "baseline"),
        ({"INPUT_ARTIFACT-NAME": "a/b"}, "artifact-name"),
        ({"GITHUB_RUN_ID": ""}, "GITHUB_RUN_ID"),
    ],
)
def test_configuration_errors_exit_2_naming_the_input_before_any_request(
    fake: FakeGitHub, tmp_path: Path, change: dict[str, str], named: str
) -> None:
    job = Job(fake, tmp_path, 10)
    job.environ |= change
    fake.seen.clear()
    code, log = job.in_process()
    assert code == 2, log
    (error,) = [line for line in log.splitlines() if line.startswith("::error ")]
    assert error.startswith(f"::error title=convy%3A configuration error::{named}")
    assert fake.seen == [] and fake.results_host.seen == []
    assert not (job.workspace / "results").exists()


def test_an_unknown_input_exits_2_from_the_command_too(fake: FakeGitHub, tmp_path: Path) -> None:
    job = Job(fake, tmp_path, 10)
    job.environ["INPUT_FAIL-ON"] = "regression"
    done = job.subprocess()
    assert done.returncode == 2
    assert (
        "::error title=convy%3A configuration error::INPUT_FAIL-ON: is not an input of the action"
        in done.stdout
    )


def test_a_dry_run_plays_compares_and_writes_locally_but_uploads_and_posts_nothing(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    job = Job(fake, tmp_path, 10, repeat="1")
    fake.seen.clear()
    code, log = job.in_process("--dry-run", "--baseline", str(golden()))
    assert code == 0, log
    assert fake.seen == [] and fake.results_host.seen == [] and comments(fake) == []
    assert "convy: no pull request comment: a dry run posts nothing" in log
    outputs = job.outputs()
    assert outputs["baseline-pass-rate"] == "0.7500" and outputs["artifact-id"] == ""
    comment = job.workspace / outputs["run-dir"] / "comment.md"
    assert comment.read_text().startswith(MARKER) and MARKER in lines_between_stop_commands(log)
    assert job.summary.read_text().startswith(MARKER)


def test_a_dry_run_outside_github_needs_nothing_of_it(tmp_path: Path) -> None:
    out = io.StringIO()
    code = Action(["--dry-run", "--demo", "--repeat", "1"], {}, out, tmp_path, FAST).exit_code()
    log = out.getvalue()
    assert code == 0, log
    assert "convy: baseline: none (" in log and "a dry run uploads nothing" in log
    (report,) = tmp_path.glob("results/support/*/report.html")
    assert (report.parent / "comment.md").read_text().startswith(MARKER)


def test_a_dry_run_writes_the_junit_file_and_names_it_in_the_outputs(tmp_path: Path) -> None:
    from tests.support.junit import read

    out = io.StringIO()
    output = tmp_path / "set_output"
    output.touch()
    argv = ["--dry-run", "--demo", "--repeat", "1", "--junit", "reports/junit.xml"]
    code = Action(argv, {"GITHUB_OUTPUT": str(output)}, out, tmp_path, FAST).exit_code()
    assert code == 0, out.getvalue()
    outputs = read_outputs(output.read_text())
    assert outputs["junit"] == "reports/junit.xml"
    assert "convy: wrote the JUnit XML file reports/junit.xml" in out.getvalue()
    suite = read(tmp_path / "reports" / "junit.xml")
    assert (suite.name, suite.tests) == ("support", 4)


def test_a_comparison_too_long_for_one_comment_is_shortened_and_posted(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    from convy.demo.servers import DemoServers

    job = Job(fake, tmp_path, 10, baseline="none")
    project = job.workspace / "evals"
    (project / "agents").mkdir(parents=True)
    (project / "agents" / "support.yaml").write_text(
        'url: ${CONVY_DEMO_URL}/chat\nbody: {"messages": "$messages"}\nanswer: reply.text\n'
    )
    scenarios = [
        {
            "name": f"talk-to-human-{number:03d}-" + "x" * 80,
            "user": "You are Robin. You are upset about a billing mistake and insist on talking to a human.",
            "opening": "I want to talk to a human, now.",
            "max_turns": 1,
            "claims": ["The agent offers to connect the user with a human.", "The agent stays polite."],
        }
        for number in range(500)
    ]
    (project / "scenarios").mkdir()
    (project / "scenarios" / "many.yaml").write_text(json.dumps(scenarios))
    with DemoServers() as demo:
        flags = demo.flags()
        job.environ |= {
            "INPUT_DEMO": "",
            "INPUT_PROJECT": "evals",
            "INPUT_REPEAT": "1",
            "INPUT_CONCURRENCY": "64",
            "INPUT_MODEL-URL": str(flags["model-url"]),
            "INPUT_USER-MODEL": "scripted-user",
            "INPUT_JUDGE-MODEL": "scripted-judge",
            **demo.environ(),
        }
        code, log = job.in_process()
    assert code == 1, log[-3000:]  # no attempt held: the gate fails (nothing-held), the comment is posted
    (body,) = comments(fake)
    assert body.startswith(MARKER) and len(body.encode("utf-16-le")) // 2 <= 65_536
    assert "more scenario" in body and "talk-to-human-000-" in body
    full = (job.workspace / job.outputs()["run-dir"] / "report.html").read_text()
    assert "talk-to-human-499-" in full


def test_a_cancelled_job_keeps_and_uploads_the_partial_folder_marked_interrupted(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    job = Job(fake, tmp_path, 10, concurrency="1", baseline="none")
    rest = cancelled(job, after="[1/12]")
    assert "::warning::interrupted: the partial run folder is" in rest
    (folder,) = (job.workspace / "results" / "support").iterdir()
    assert json.loads((folder / "run.json").read_text())["status"] == "interrupted"
    (stored,) = fake.artifacts_of(job.run)
    assert stored.name == "convy-support"
