"""Context and WorkflowEvent: the runner's variables and the event file read into our types, the baseline
branch chosen, provenance and links made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from convy.errors import ConfigurationError
from convy_action.runner.context import Context, WorkflowEvent


def event_file(tmp_path: Path, payload: object) -> str:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload))
    return str(path)


PULL_REQUEST = {
    "action": "synchronize",
    "number": 7,
    "pull_request": {
        "number": 7,
        "base": {"ref": "main", "sha": "a" * 40, "repo": {"id": 1, "full_name": "o/r"}},
        "head": {"ref": "feature", "sha": "b" * 40, "repo": {"id": 2, "full_name": "fork/r"}},
        "title": "unused fields are ignored",
    },
    "repository": {"id": 1, "full_name": "o/r", "default_branch": "trunk"},
}


def test_a_pull_request_event_gives_its_number_and_base_branch(tmp_path: Path) -> None:
    context = Context({"GITHUB_EVENT_PATH": event_file(tmp_path, PULL_REQUEST)}, tmp_path)
    event = context.event()
    assert event.pull().number == 7
    assert context.baseline_branch("", event) == "main"
    assert context.baseline_branch("release", event) == "release"


def test_a_push_has_no_pull_request_and_looks_on_the_default_branch(tmp_path: Path) -> None:
    payload = {"ref": "refs/heads/trunk", "repository": {"default_branch": "trunk"}}
    context = Context({"GITHUB_EVENT_PATH": event_file(tmp_path, payload)}, tmp_path)
    event = context.event()
    assert event.pull().number == 0
    assert context.baseline_branch("", event) == "trunk"


def test_a_comment_on_a_pull_request_and_a_workflow_run_name_it(tmp_path: Path) -> None:
    comment = {"issue": {"number": 12, "pull_request": {"url": "x"}}}
    plain_issue = {"issue": {"number": 13}}
    followed = {"workflow_run": {"id": 5, "pull_requests": [{"number": 14, "base": {"ref": "main"}}]}}
    assert WorkflowEvent().pull().number == 0
    for payload, number in ((comment, 12), (plain_issue, 0), (followed, 14)):
        context = Context({"GITHUB_EVENT_PATH": event_file(tmp_path, payload)}, tmp_path)
        assert context.event().pull().number == number


def test_a_missing_event_file_is_an_empty_event_and_a_broken_one_an_error(tmp_path: Path) -> None:
    assert Context({"GITHUB_EVENT_PATH": str(tmp_path / "nope.json")}, tmp_path).event() == WorkflowEvent()
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ConfigurationError) as error:
        Context({"GITHUB_EVENT_PATH": str(tmp_path / "bad.json")}, tmp_path).event()
    assert error.value.where == "GITHUB_EVENT_PATH"


def test_the_workflow_file_comes_from_the_workflow_ref(tmp_path: Path) -> None:
    ref = "octo-org/hello-world/.github/workflows/convy.yml@refs/pull/7/merge"
    assert Context({"GITHUB_WORKFLOW_REF": ref}, tmp_path).workflow == "convy.yml"
    assert Context({}, tmp_path).workflow == ""


def test_provenance_and_links(tmp_path: Path) -> None:
    environ = {
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_SHA": "c" * 40,
        "GITHUB_REF": "refs/pull/7/merge",
        "GITHUB_RUN_ID": "991",
        "GITHUB_SERVER_URL": "https://ghe.example.com/",
        "GITHUB_EVENT_PATH": event_file(tmp_path, PULL_REQUEST),
    }
    context = Context(environ, tmp_path)
    provenance = context.provenance(context.event())
    assert (provenance.repository, provenance.sha, provenance.workflow_run, provenance.pull_request) == (
        "o/r",
        "c" * 40,
        "991",
        7,
    )
    assert context.run_url() == "https://ghe.example.com/o/r/actions/runs/991"
    assert context.artifact_url(5) == "https://ghe.example.com/o/r/actions/runs/991/artifacts/5"
    assert Context({}, tmp_path).run_url() == "" and Context({}, tmp_path).api_url == "https://api.github.com"


def test_outside_a_workflow_run_the_check_says_to_use_a_dry_run(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as error:
        Context({}, tmp_path).check()
    assert error.value.where == "GITHUB_REPOSITORY" and "--dry-run" in error.value.message
    with pytest.raises(ConfigurationError) as error:
        Context({"GITHUB_REPOSITORY": "o/r"}, tmp_path).check()
    assert error.value.where == "GITHUB_RUN_ID"
    Context({"GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "3"}, tmp_path).check()


def test_numbers_the_runner_may_leave_out(tmp_path: Path) -> None:
    context = Context({"GITHUB_RUN_ATTEMPT": "2", "GITHUB_RETENTION_DAYS": "30"}, tmp_path)
    assert (context.run_attempt, context.retention_days, context.run_id) == (2, 30, 0)
    assert (Context({}, tmp_path).run_attempt, Context({}, tmp_path).retention_days) == (1, 0)


def test_paths_are_shown_relative_to_the_workspace(tmp_path: Path) -> None:
    context = Context({}, tmp_path)
    assert context.relative(tmp_path / "results" / "a" / "b") == "results/a/b"
    assert context.relative(Path("/elsewhere/x")) == "/elsewhere/x"
