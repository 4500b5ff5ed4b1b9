"""Each of the action's stages (decision 25) built on its own, with the job's log over a StringIO:
no invocation, no environment but the one given, no request sent."""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import pytest

from convy.errors import ConfigurationError
from convy.project.shard import Slice
from convy_action.github.services import Services
from convy_action.publish.dry import KeptFolder
from convy_action.publish.ending import Ending
from convy_action.publish.shelf import ArtifactShelf, NotUploaded
from convy_action.publish.where import Where
from convy_action.runner.checks import Checks
from convy_action.runner.context import Context, EventPullRequest, WorkflowEvent
from convy_action.runner.log import Log
from convy_action.runner.settings import ActionSettings as Settings

RUNNER = {"GITHUB_REPOSITORY": "octo-org/hello-world", "GITHUB_RUN_ID": "7", "GITHUB_RETENTION_DAYS": "30"}
ARTIFACTS = {"ACTIONS_RESULTS_URL": "http://127.0.0.1:9/", "ACTIONS_RUNTIME_TOKEN": "runtime"}
PULL = WorkflowEvent(pull_request=EventPullRequest(number=12))


def where(settings: Settings, environ: dict[str, str], client: httpx.Client, out: io.StringIO) -> Where:
    context = Context(environ, Path.cwd())
    services = Services(context, settings.github_token, client)
    return Where(settings=settings, context=context, event=PULL, services=services, log=Log(out))


def test_the_checks_refuse_a_merge_shard_and_github_without_a_token() -> None:
    checks = Checks(Settings(), Context(RUNNER, Path.cwd()), PULL)
    with pytest.raises(ConfigurationError, match="shard"):
        checks.merge(Slice.read("1/2"))
    with pytest.raises(ConfigurationError, match="ACTIONS_RUNTIME_TOKEN"):
        checks.merge(Slice.read(""))
    with pytest.raises(ConfigurationError, match="the pull request comment and the baseline"):
        checks.token()
    Checks(Settings(dry_run=True), Context({}, Path.cwd()), PULL).token()


def test_services_reach_the_rest_api_only_with_a_repository_and_a_token() -> None:
    with httpx.Client() as client:
        assert Services(Context(RUNNER, Path.cwd()), "", client).rest() is None
        assert Services(Context({}, Path.cwd()), "token", client).rest() is None
        assert Services(Context(RUNNER, Path.cwd()), "token", client).rest() is not None


def test_where_keeps_the_folder_and_shows_the_comment_in_a_dry_run() -> None:
    out = io.StringIO()
    with httpx.Client() as client:
        chosen = where(Settings(dry_run=True, github_token="token"), {**RUNNER, **ARTIFACTS}, client, out)
        assert chosen.shelf("convy-support") == KeptFolder("a dry run uploads nothing")
    assert out.getvalue() == ""


def test_where_warns_of_a_job_without_the_runner_s_artifact_token() -> None:
    out = io.StringIO()
    with httpx.Client() as client:
        shelf = where(Settings(), RUNNER, client, out).shelf("convy-support")
    assert shelf == KeptFolder("the runner gave no artifact token")
    assert out.getvalue().startswith("::warning::ACTIONS_RUNTIME_TOKEN or ACTIONS_RESULTS_URL is not set")


def test_where_uploads_for_as_many_days_as_the_repository_allows() -> None:
    out = io.StringIO()
    with httpx.Client() as client:
        shelf = where(Settings(retention_days=90), {**RUNNER, **ARTIFACTS}, client, out).shelf("convy-a")
    assert isinstance(shelf, ArtifactShelf) and (shelf.name, shelf.days) == ("convy-a", 30)
    assert "retention-days 90 is more than the repository allows" in out.getvalue()


def test_the_ending_tells_what_became_of_the_folder() -> None:
    out = io.StringIO()
    ending = Ending(Context(RUNNER, Path.cwd()), Log(out), Settings(), Path.cwd())
    ending.told(NotUploaded(reason="a dry run uploads nothing"))
    ending.told(NotUploaded(reason="the upload failed: 500", failed=True))
    assert out.getvalue().splitlines() == [
        "convy: the run folder was not uploaded: a dry run uploads nothing",
        "::warning::the run folder was not uploaded: the upload failed: 500",
    ]
