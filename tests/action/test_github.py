"""GitHub, the REST client, against the local stand-in: runs, artifacts and their download through
the storage redirect, comments across pages, and bounded retries on rate limits and server errors."""

from __future__ import annotations

import io
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from convy.fakes import ManualClock
from convy_action.github.rest import GitHub, GitHubError
from convy_action.github.retries import Retries
from convy_action.github.zipped import UnsafeArchive
from tests.servers.github import FakeGitHub, Token
from tests.servers.results import Fault

FAST = Retries(attempts=3, first_wait=0.01, longest_wait=2.0, total_wait=5.0, secondary_wait=0.01)
MARKER = "<!-- convy-action:support -->"


@pytest.fixture
def github(fake: FakeGitHub, client: httpx.Client) -> GitHub:
    return GitHub(fake.api, fake.token, fake.repository, client, FAST)


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def api_requests(fake: FakeGitHub, method: str = "GET") -> list[str]:
    return [seen.path for seen in fake.seen if seen.method == method]


# -- runs and artifacts


def test_runs_of_a_workflow_by_file_name_are_filtered_and_newest_first(
    fake: FakeGitHub, github: GitHub
) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    old = fake.run(created_at=start)
    new = fake.run(created_at=start + timedelta(hours=1))
    fake.run(created_at=start + timedelta(hours=2), head_branch="feature")
    fake.run(created_at=start + timedelta(hours=3), conclusion="failure")
    fake.run(created_at=start + timedelta(hours=4), workflow=".github/workflows/other.yml")
    runs = github.runs("ci.yml", branch="main", status="success")
    assert [r.id for r in runs] == [new.id, old.id]
    assert runs[0].created_at == start + timedelta(hours=1)
    assert runs[0].workflow_id == new.workflow_id and runs[0].path == ".github/workflows/ci.yml"
    assert runs[0].head_repository is not None and runs[0].head_repository.full_name == fake.repository
    assert [r.id for r in github.runs(new.workflow_id, branch="main", status="success")] == [new.id, old.id]
    assert "branch=main" in api_requests(fake)[0] and "per_page=100" in api_requests(fake)[0]
    headers = fake.seen[0].headers
    assert (
        headers["accept"] == "application/vnd.github+json" and headers["x-github-api-version"] == "2022-11-28"
    )


def test_runs_follow_pages_up_to_the_limit(fake: FakeGitHub, github: GitHub) -> None:
    for _ in range(150):
        fake.run()
    assert len(github.runs("ci.yml")) == 100
    assert len(github.runs("ci.yml", pages=5)) == 150


def test_an_unknown_workflow_is_an_error_with_the_url_but_no_query(fake: FakeGitHub, github: GitHub) -> None:
    with pytest.raises(GitHubError) as error:
        github.runs("nope.yml", branch="main")
    assert error.value.status == 404 and error.value.message == "Not Found"
    assert error.value.url.endswith("/actions/workflows/nope.yml/runs") and "?" not in str(error.value)
    assert len(api_requests(fake)) == 1


def test_one_run(fake: FakeGitHub, github: GitHub) -> None:
    run = fake.run(head_branch="main", event="pull_request")
    found = github.run(run.id)
    assert (found.id, found.head_branch, found.head_sha, found.event) == (
        run.id,
        "main",
        run.head_sha,
        "pull_request",
    )


def test_artifacts_of_a_run_by_name(fake: FakeGitHub, github: GitHub) -> None:
    run = fake.run()
    mine = fake.artifact(run, "convy-support", zipped({"run.json": b"{}"}))
    fake.artifact(run, "coverage", b"zip")
    fake.artifact(fake.run(), "convy-support", b"zip")
    artifacts = github.artifacts(run.id, name="convy-support")
    assert [a.id for a in artifacts] == [mine.id]
    assert artifacts[0].size_in_bytes == mine.size and artifacts[0].digest == mine.digest
    assert artifacts[0].workflow_run is not None and artifacts[0].workflow_run.id == run.id
    assert artifacts[0].expired is False and artifacts[0].archive_download_url.endswith(f"/{mine.id}/zip")
    assert len(github.artifacts(run.id)) == 2


def test_an_expired_artifact_is_listed_as_expired_and_is_gone(
    fake: FakeGitHub, github: GitHub, tmp_path: Path
) -> None:
    run = fake.run()
    stale = fake.artifact(run, "convy-support", b"zip", expired=True)
    assert github.artifacts(run.id)[0].expired is True
    with pytest.raises(GitHubError) as error:
        github.download(stale.id, tmp_path / "a.zip")
    assert error.value.status == 410 and "expired" in error.value.message
    assert not (tmp_path / "a.zip").exists()


# -- the download through storage


def test_the_download_follows_the_redirect_without_the_token(
    fake: FakeGitHub, github: GitHub, tmp_path: Path
) -> None:
    content = zipped({"run.json": b'{"format": 1}', "attempts.jsonl": b"{}\n" * 100})
    artifact = fake.artifact(fake.run(), "convy-support", content)
    assert github.download(artifact.id, tmp_path / "a.zip") == len(content)
    assert (tmp_path / "a.zip").read_bytes() == content
    assert all(seen.headers.get("authorization") == f"Bearer {fake.token}" for seen in fake.seen)
    assert [seen.method for seen in fake.storage_host.seen] == ["GET"]
    assert "authorization" not in fake.storage_host.seen[0].headers


def test_storage_refuses_a_client_that_sends_the_token_along(fake: FakeGitHub, client: httpx.Client) -> None:
    artifact = fake.artifact(fake.run(), "convy-support", b"zip")
    headers = {"Authorization": f"Bearer {fake.token}", "Accept": "application/vnd.github+json"}
    url = f"{fake.api}/repos/{fake.repository}/actions/artifacts/{artifact.id}/zip"
    redirect = client.get(url, headers=headers)
    assert redirect.status_code == 302
    naive = client.get(redirect.headers["location"], headers=headers)  # re-sends every header
    assert naive.status_code == 403 and b"AuthenticationFailed" in naive.content
    assert client.get(redirect.headers["location"]).content == b"zip"


def test_a_download_over_the_cap_is_refused_and_removed(
    fake: FakeGitHub, github: GitHub, tmp_path: Path
) -> None:
    artifact = fake.artifact(fake.run(), "convy-support", b"x" * 5000)
    with pytest.raises(UnsafeArchive, match="more than 4000"):
        github.download(artifact.id, tmp_path / "a.zip", max_bytes=4000)
    assert not (tmp_path / "a.zip").exists()


def test_a_storage_server_error_is_tried_again(fake: FakeGitHub, github: GitHub, tmp_path: Path) -> None:
    artifact = fake.artifact(fake.run(), "convy-support", b"zip")
    fake.storage_host.faults.add(Fault(503, times=1))
    assert github.download(artifact.id, tmp_path / "a.zip") == 3
    assert len(fake.storage_host.seen) == 2


def test_a_client_with_credentials_of_its_own_is_refused(fake: FakeGitHub) -> None:
    with httpx.Client(headers={"Authorization": "Bearer x"}) as http, pytest.raises(ValueError):
        GitHub(fake.api, fake.token, fake.repository, http)
    with httpx.Client(auth=("a", "b")) as http, pytest.raises(ValueError):
        GitHub(fake.api, fake.token, fake.repository, http)


def test_a_repository_must_be_owner_and_name(fake: FakeGitHub, client: httpx.Client) -> None:
    for wrong in ("hello", "a/b/c", "/b", "a/"):
        with pytest.raises(ValueError):
            GitHub(fake.api, fake.token, wrong, client)


def test_the_token_is_not_in_its_repr(github: GitHub, fake: FakeGitHub) -> None:
    assert fake.token not in repr(github) and fake.repository in repr(github)


# -- comments


def test_comments_across_pages_find_one_on_page_two(fake: FakeGitHub, github: GitHub) -> None:
    for i in range(230):
        fake.comment(7, MARKER + "\nours" if i == 150 else f"comment {i}")
    fake.comment(8, MARKER)
    comments = github.comments(7)
    assert len(comments) == 230 and [c.id for c in comments] == sorted(c.id for c in comments)
    ours = [c for c in comments if c.body.startswith(MARKER)]
    assert len(ours) == 1 and ours[0].body.endswith("ours")
    assert ours[0].user is not None and ours[0].user.login == "github-actions[bot]"
    pages = api_requests(fake)
    assert len(pages) == 3
    assert pages[1] == f"/repositories/{fake.repository_id}/issues/7/comments?per_page=100&page=2"


def test_the_link_header_is_formatted_as_github_does(fake: FakeGitHub, client: httpx.Client) -> None:
    for i in range(250):
        fake.comment(7, f"comment {i}")
    base = f"{fake.api}/repositories/{fake.repository_id}/issues/7/comments?per_page=100"
    headers = {"Authorization": f"Bearer {fake.token}"}
    first = client.get(f"{fake.api}/repos/{fake.repository}/issues/7/comments?per_page=100", headers=headers)
    assert first.headers["link"] == f'<{base}&page=2>; rel="next", <{base}&page=3>; rel="last"'
    middle = client.get(f"{base}&page=2", headers=headers)
    assert middle.headers["link"] == (
        f'<{base}&page=1>; rel="prev", <{base}&page=3>; rel="next", '
        f'<{base}&page=3>; rel="last", <{base}&page=1>; rel="first"'
    )
    assert len(middle.json()) == 100
    one = client.get(f"{fake.api}/repos/{fake.repository}/issues/8/comments", headers=headers)
    assert "link" not in one.headers and one.json() == []


def test_comment_pages_are_bounded(fake: FakeGitHub, github: GitHub) -> None:
    for i in range(250):
        fake.comment(7, f"comment {i}")
    assert len(github.comments(7, pages=2)) == 200
    assert len(api_requests(fake)) == 2


def test_a_page_link_to_another_host_is_not_followed(fake: FakeGitHub, github: GitHub) -> None:
    fake.fail(200, body=b"[]", link='<https://elsewhere.example/steal?page=2>; rel="next"')
    with pytest.raises(GitHubError, match="leaves the API"):
        github.comments(7)


def test_post_and_edit_a_comment(fake: FakeGitHub, github: GitHub) -> None:
    posted = github.post(12, MARKER + "\nfirst")
    assert posted.user is not None and posted.user.login == "github-actions[bot]"
    edited = github.edit(posted.id, MARKER + "\nsecond")
    assert edited.id == posted.id and edited.body.endswith("second")
    assert [c.body for c in fake.comments] == [MARKER + "\nsecond"]
    assert [c.id for c in github.comments(12)] == [posted.id]


def test_a_body_over_the_limit_is_a_validation_error(github: GitHub) -> None:
    with pytest.raises(GitHubError) as error:
        github.post(12, "x" * 65537)
    assert error.value.status == 422 and error.value.message == "Validation Failed"


def test_a_read_only_token_cannot_comment_and_is_not_retried(fake: FakeGitHub, client: httpx.Client) -> None:
    fake.tokens["read-only"] = Token(write=False)
    github = GitHub(fake.api, "read-only", fake.repository, client, FAST)
    with pytest.raises(GitHubError) as error:
        github.post(12, "hello")
    assert error.value.status == 403 and error.value.message == "Resource not accessible by integration"
    assert len(api_requests(fake, "POST")) == 1


def test_login_is_empty_for_a_github_token_and_known_for_a_person(
    fake: FakeGitHub, client: httpx.Client
) -> None:
    assert GitHub(fake.api, fake.token, fake.repository, client, FAST).login() == ""
    fake.tokens["ghp_person"] = Token(login="octocat", id=1, app=False)
    assert GitHub(fake.api, "ghp_person", fake.repository, client, FAST).login() == "octocat"


def test_bad_credentials(fake: FakeGitHub, client: httpx.Client) -> None:
    with pytest.raises(GitHubError) as error:
        GitHub(fake.api, "wrong", fake.repository, client, FAST).comments(1)
    assert error.value.status == 401 and error.value.message == "Bad credentials"


# -- retries


def test_429_is_tried_again(fake: FakeGitHub, github: GitHub) -> None:
    fake.comment(7, "hello")
    fake.fail(429, times=2)
    assert [c.body for c in github.comments(7)] == ["hello"]
    assert len(api_requests(fake)) == 3


def test_429_forever_gives_up_after_the_attempts(fake: FakeGitHub, github: GitHub) -> None:
    fake.fail(429, times=100)
    with pytest.raises(GitHubError) as error:
        github.comments(7)
    assert error.value.status == 429
    assert len(api_requests(fake)) == FAST.attempts


def clocked(fake: FakeGitHub, client: httpx.Client, **retries: Any) -> tuple[GitHub, ManualClock]:
    """GitHub whose retries wait on a clock the test reads (nothing is really slept)."""
    clock = ManualClock()
    settings = {"attempts": 3, "first_wait": 0.01, "longest_wait": 2.0, "total_wait": 5.0, **retries}
    return GitHub(fake.api, fake.token, fake.repository, client, Retries(**settings, clock=clock)), clock


def test_403_with_retry_after_waits_that_long(fake: FakeGitHub, client: httpx.Client) -> None:
    fake.comment(7, "hello")
    fake.fail(403, retry_after="1", message="You have exceeded a secondary rate limit.")
    github, clock = clocked(fake, client)
    assert len(github.comments(7)) == 1
    assert clock.slept == [1.0]
    assert len(api_requests(fake)) == 2


def test_a_spent_rate_limit_waits_for_its_reset(fake: FakeGitHub, client: httpx.Client) -> None:
    fake.comment(7, "hello")
    github, clock = clocked(fake, client)
    reset = str(int(clock.wall()) + 1)
    fake.fail(403, x_ratelimit_remaining="0", x_ratelimit_reset=reset, message="API rate limit exceeded")
    assert len(github.comments(7)) == 1
    assert clock.slept == [1.0]
    assert len(api_requests(fake)) == 2


def test_a_secondary_rate_limit_without_advice_is_tried_again(fake: FakeGitHub, github: GitHub) -> None:
    fake.fail(403, message="You have exceeded a secondary rate limit. Please wait a few minutes.")
    assert github.comments(7) == ()
    assert len(api_requests(fake)) == 2


def test_a_wait_longer_than_allowed_gives_up_at_once(fake: FakeGitHub, client: httpx.Client) -> None:
    fake.fail(403, retry_after="3600", message="You have exceeded a secondary rate limit.")
    github, clock = clocked(fake, client)
    with pytest.raises(GitHubError) as error:
        github.comments(7)
    assert error.value.status == 403 and clock.slept == []
    assert len(api_requests(fake)) == 1


def test_a_403_without_rate_limit_is_not_tried_again(fake: FakeGitHub, github: GitHub) -> None:
    fake.fail(403, message="Must have admin rights to Repository.")
    with pytest.raises(GitHubError, match="admin rights"):
        github.comments(7)
    assert len(api_requests(fake)) == 1


def test_server_errors_are_tried_again_on_reads(fake: FakeGitHub, github: GitHub) -> None:
    fake.fail(502, times=2)
    assert github.comments(7) == ()
    assert len(api_requests(fake)) == 3


def test_a_server_error_on_post_is_not_tried_again(fake: FakeGitHub, github: GitHub) -> None:
    fake.fail(502, method="POST")
    with pytest.raises(GitHubError) as error:
        github.post(7, "hello")
    assert error.value.status == 502 and len(api_requests(fake, "POST")) == 1


def test_the_total_wait_is_bounded(fake: FakeGitHub, client: httpx.Client) -> None:
    fake.fail(503, times=10_000)
    github, clock = clocked(fake, client, attempts=1000, first_wait=0.1, longest_wait=0.2, total_wait=0.6)
    with pytest.raises(GitHubError):
        github.comments(7)
    assert clock.slept == pytest.approx([0.1, 0.2, 0.2]), "a fourth wait would end after 0.6 s"
    assert len(api_requests(fake)) == 4


def test_no_answer_is_an_error_after_the_attempts(client: httpx.Client) -> None:
    with FakeGitHub() as gone:
        url, token, repository = gone.api, gone.token, gone.repository
    with pytest.raises(GitHubError) as error:
        GitHub(url, token, repository, client, FAST).comments(7)
    assert error.value.status == 0 and "ConnectError" in error.value.message


def test_errors_never_show_the_token(fake: FakeGitHub, github: GitHub) -> None:
    fake.fail(404, message=f"no such thing for {fake.token}")
    with pytest.raises(GitHubError) as error:
        github.comments(7)
    assert fake.token not in str(error.value) and "***" in str(error.value)


def test_a_moved_repository_is_followed_within_the_api(fake: FakeGitHub, github: GitHub) -> None:
    fake.comment(7, "hello")
    moved = f"{fake.api}/repositories/{fake.repository_id}/issues/7/comments?per_page=100"
    fake.fail(301, path=f"/repos/{fake.repository}/", message="Moved Permanently", location=moved)
    assert [c.body for c in github.comments(7)] == ["hello"]
    assert api_requests(fake)[1] == moved.removeprefix(fake.api)
    assert fake.seen[1].headers["authorization"] == f"Bearer {fake.token}"
