"""The REST API of one repository as the action uses it: workflow runs, their artifacts and the
download of one, a pull request's comments, the token's login. What comes back is read into records
where it enters."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
import msgspec

from convy.tools import Data
from convy_action.errors import ActionError
from convy_action.github.download import AGENT, Download
from convy_action.github.retries import PATIENT, Retries, Transient
from convy_action.github.zipped import MIB, UnsafeArchive

API_VERSION = "2022-11-28"
T = TypeVar("T")


class GitHubError(ActionError):
    """GitHub (or the storage it redirects to) answered `status` (0: no answer) for `url`, shown
    without its query. The message never holds the token."""

    def __init__(self, status: int, url: str, message: str) -> None:
        super().__init__(f"{status} from {url}: {message}" if status else f"{url}: {message}")
        self.status = status
        self.url = url
        self.message = message


class Repository(Data, frozen=True, kw_only=True):
    id: int = 0
    full_name: str = ""


class WorkflowRun(Data, frozen=True, kw_only=True):
    """A workflow run (REST `workflow-run`, the fields we use)."""

    id: int
    name: str | None = None
    head_branch: str | None = None
    head_sha: str = ""
    event: str = ""
    status: str | None = None
    conclusion: str | None = None
    workflow_id: int = 0
    path: str = ""
    run_attempt: int = 1
    created_at: datetime
    head_repository: Repository | None = None
    repository: Repository | None = None


class ArtifactRun(Data, frozen=True, kw_only=True):
    id: int = 0
    head_branch: str | None = None
    head_sha: str = ""
    repository_id: int = 0
    head_repository_id: int = 0


class Artifact(Data, frozen=True, kw_only=True):
    """A workflow artifact (REST `artifact`, the fields we use)."""

    id: int
    name: str
    size_in_bytes: int = 0
    expired: bool = False
    created_at: datetime | None = None
    expires_at: datetime | None = None
    archive_download_url: str = ""
    digest: str | None = None
    workflow_run: ArtifactRun | None = None


class GitHubUser(Data, frozen=True, kw_only=True):
    login: str
    id: int = 0
    type: str = ""


class IssueComment(Data, frozen=True, kw_only=True):
    """A comment of an issue or pull request (REST `issue-comment`, the fields we use)."""

    id: int
    body: str = ""
    user: GitHubUser | None = None
    html_url: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None


class RunsPage(Data, frozen=True, kw_only=True):
    total_count: int = 0
    workflow_runs: tuple[WorkflowRun, ...] = ()


class ArtifactsPage(Data, frozen=True, kw_only=True):
    total_count: int = 0
    artifacts: tuple[Artifact, ...] = ()


class Problem(Data, frozen=True, kw_only=True):
    """GitHub's error body (`basic-error`)."""

    message: str = ""


class GitHub:
    """The REST API at `api_url` for `repository` ("owner/name"), with `token` (may be empty).
    `client` must not carry credentials of its own: the archive download goes to storage without
    any. Lists follow `Link: rel="next"` for at most `pages` pages."""

    def __init__(
        self, api_url: str, token: str, repository: str, client: httpx.Client, retries: Retries = PATIENT
    ) -> None:
        owner, _, name = repository.partition("/")
        if not owner or not name or "/" in name:
            raise ValueError("the repository must be written owner/name")
        if "authorization" in client.headers or client.auth is not None:
            raise ValueError("the HTTP client must not carry credentials of its own")
        self._api, self._token, self._repository = api_url, token, repository
        self._client, self._retries = client, retries

    def __repr__(self) -> str:
        return f"GitHub({self._api!r}, repository={self._repository!r})"

    def runs(
        self, workflow: str | int, branch: str = "", status: str = "", event: str = "", pages: int = 1
    ) -> tuple[WorkflowRun, ...]:
        """The runs of `workflow` (its id or file name), newest first, 100 a page."""
        url = self._url(f"actions/workflows/{quote(str(workflow), safe='')}/runs")
        params = {"branch": branch, "status": status, "event": event}
        query = {k: v for k, v in params.items() if v} | {"exclude_pull_requests": "true", "per_page": "100"}
        return tuple(
            run for page in self._pages(url, query, pages) for run in self._read(page, RunsPage).workflow_runs
        )

    def run(self, run_id: int) -> WorkflowRun:
        return self._read(self._request("GET", self._url(f"actions/runs/{run_id}")), WorkflowRun)

    def artifacts(self, run_id: int, name: str = "", pages: int = 10) -> tuple[Artifact, ...]:
        """The artifacts of a run, named `name` when given."""
        url = self._url(f"actions/runs/{run_id}/artifacts")
        query = {"per_page": "100"} | ({"name": name} if name else {})
        return tuple(
            a for page in self._pages(url, query, pages) for a in self._read(page, ArtifactsPage).artifacts
        )

    def download(self, artifact_id: int, to: Path, max_bytes: int = 512 * MIB) -> int:
        """Write the artifact's zip to the file `to` and return its size. GitHub redirects to
        storage, which is asked without the token; over `max_bytes` raises UnsafeArchive."""
        url = self._url(f"actions/artifacts/{artifact_id}/zip")
        response = self._request("GET", url, follow=False)
        location = response.headers.get("location", "")
        if response.status_code != 302 or not location:
            raise GitHubError(response.status_code, self._bare(url), "expected a redirect to the archive")
        target = str(httpx.URL(url).join(location))
        return Download(self._client, self._retries, ArchiveFailures()).fetched(target, to, max_bytes)

    def comments(self, number: int, pages: int = 50) -> tuple[IssueComment, ...]:
        """The comments of issue or pull request `number`, oldest first, every page up to `pages`."""
        url = self._url(f"issues/{number}/comments")
        return tuple(
            c
            for page in self._pages(url, {"per_page": "100"}, pages)
            for c in self._read(page, list[IssueComment])
        )

    def post(self, number: int, body: str) -> IssueComment:
        """Create a comment on issue or pull request `number`."""
        url = self._url(f"issues/{number}/comments")
        return self._read(self._request("POST", url, body={"body": body}), IssueComment)

    def edit(self, comment_id: int, body: str) -> IssueComment:
        """Replace the body of comment `comment_id`."""
        url = self._url(f"issues/comments/{comment_id}")
        return self._read(self._request("PATCH", url, body={"body": body}), IssueComment)

    def login(self) -> str:
        """The token's own login; "" where the token may not ask (a GITHUB_TOKEN gets 403)."""
        try:
            return self._read(self._request("GET", self._url("/user")), GitHubUser).login
        except GitHubError as e:
            if e.status in (401, 403, 404):
                return ""
            raise

    def _url(self, path: str) -> str:
        """The API's URL of `path`, below the repository unless it starts with `/`."""
        owner, _, name = self._repository.partition("/")
        below = (
            path if path.startswith("/") else f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}/{path}"
        )
        return self._api.rstrip("/") + below

    def _headers(self) -> dict[str, str]:
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": AGENT,
        }
        return headers | ({"Authorization": f"Bearer {self._token}"} if self._token else {})

    def _pages(self, url: str, query: dict[str, str], pages: int) -> Iterator[httpx.Response]:
        address, params = url, query
        for _ in range(pages):
            response = self._request("GET", address, params=params)
            yield response
            following = response.links.get("next", {}).get("url", "")
            if not following:
                return
            link = httpx.URL(address).join(following)
            if (link.scheme, link.host, link.port) != (
                (base := httpx.URL(self._api)).scheme,
                base.host,
                base.port,
            ):
                raise GitHubError(0, self._bare(str(link)), "a page link leaves the API's host")
            address, params = str(link), {}

    def _request(
        self,
        method: str,
        url: str,
        params: dict[str, str] | None = None,
        body: Any = None,
        follow: bool = True,
    ) -> httpx.Response:
        """The answer to a request, redirects within the API followed when `follow` (httpx drops
        the token on a redirect to another host)."""
        return self._retries.call(lambda: self._once(method, url, params, body, follow))

    def _once(
        self, method: str, url: str, params: dict[str, str] | None, body: Any, follow: bool
    ) -> httpx.Response:
        again = method != "POST"  # a comment is never posted twice
        try:
            response = self._client.request(
                method,
                url,
                params=params or None,
                json=body,
                headers=self._headers(),
                follow_redirects=follow,
            )
        except httpx.TransportError as e:
            error = GitHubError(0, self._bare(url), f"no answer ({type(e).__name__})")
            raise (Transient(error) if again else error) from None
        if response.status_code < 400:
            return response
        error = GitHubError(response.status_code, self._bare(url), self._message(response))
        raise self._retries.verdict(response, error, server_errors=again)

    def _read(self, response: httpx.Response, kind: type[T]) -> T:
        try:
            return msgspec.json.decode(response.content, type=kind)
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            raise GitHubError(
                response.status_code, self._bare(str(response.url)), f"unexpected answer: {e}"
            ) from None

    def _message(self, response: httpx.Response) -> str:
        try:
            message = msgspec.json.decode(response.content, type=Problem).message
        except (msgspec.DecodeError, msgspec.ValidationError):
            message = ""
        message = message or response.reason_phrase
        return message.replace(self._token, "***") if self._token else message

    def _bare(self, url: str) -> str:
        """`url` without its query (which may hold a signature) and fragment."""
        return str(httpx.URL(url).copy_with(query=None, fragment=None))


class ArchiveFailures(msgspec.Struct, frozen=True):
    """A download of an artifact's archive from the storage GitHub redirects to, failing as the
    REST API's errors: too big is an UnsafeArchive."""

    def refused(self, answer: httpx.Response, where: str) -> Exception:
        return GitHubError(answer.status_code, where, "the storage refused the download")

    def too_big(self, declared: str, most: int) -> Exception:
        if declared:
            return UnsafeArchive(f"the artifact is {declared} bytes, more than {most}")
        return UnsafeArchive(f"the artifact is more than {most} bytes")

    def unanswered(self, where: str, error: httpx.TransportError) -> Exception:
        return GitHubError(0, where, f"no answer ({type(error).__name__})")
