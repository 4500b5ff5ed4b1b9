"""FakeGitHub: a local stand-in for GitHub as the action meets it — the REST API (workflow runs,
artifacts and their download, issue comments, /user), the Actions results service and the blob
storage host — three real local HTTP servers sharing in-memory state.

Answers follow the REST description (github/rest-api-description, 2022-11-28): `Link` headers with
rel="prev"/"next"/"last"/"first" on /repositories/{id}/ URLs, basic-error bodies, 302 to a
signed storage URL for an archive, 410 for an expired one, rate-limit headers on every answer."""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Self
from urllib.parse import parse_qsl, urlencode, urlsplit

from convy.demo.localserver import LocalServer
from tests.servers.results import Answer, Fault, Faults, Results, Seen, Storage, Stored, stamp

DOCS = "https://docs.github.com/rest"
BOT_LOGIN = "github-actions[bot]"
BOT: dict[str, object] = {"login": BOT_LOGIN, "id": 41898282, "type": "Bot"}
NOT_INTEGRATION = "Resource not accessible by integration"


@dataclass
class Token:
    """A token the API accepts: a GITHUB_TOKEN (`app`: /user refused) or a person's."""

    login: str = BOT_LOGIN
    id: int = 41898282
    app: bool = True
    write: bool = True


@dataclass
class Run:
    """A workflow run of the fake repository."""

    id: int
    workflow_id: int
    path: str
    head_branch: str
    head_sha: str
    event: str
    status: str
    conclusion: str | None
    created_at: datetime
    name: str = "CI"
    run_attempt: int = 1
    backend: str = field(default_factory=lambda: str(uuid.uuid4()))
    fork: bool = False


@dataclass
class Comment:
    id: int
    issue: int
    body: str
    user: dict[str, object]
    created_at: datetime
    updated_at: datetime


class FakeGitHub:
    """GitHub for `repository`; `api`, `results` and `storage` are its servers' base URLs once
    started. `token` is a valid GITHUB_TOKEN; `faults` makes the API misbehave on purpose."""

    def __init__(self, repository: str = "octo-org/hello-world", repository_id: int = 1296269) -> None:
        self.repository = repository
        self.repository_id = repository_id
        self.storage_host = Storage()
        self._backends: dict[str, int] = {}
        self.results_host = Results(self.storage_host, secrets.token_bytes(32), self._backends)
        self._server = LocalServer(self.route)
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """A new world on the same servers: no runs, artifacts, comments, faults; a new token."""
        self.token = "ghs_" + secrets.token_hex(16)
        self.tokens: dict[str, Token] = {self.token: Token()}
        self.workflows: dict[str, int] = {}
        self.runs: dict[int, Run] = {}
        self.comments: list[Comment] = []
        self.faults = Faults()
        self.seen: list[Seen] = []
        self._backends.clear()
        self._next = 100
        self.storage_host.reset()
        self.results_host.reset()

    # -- lifecycle and URLs

    def __enter__(self) -> Self:
        for server in self._servers():
            server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        stopping = [threading.Thread(target=server.stop) for server in self._servers()]
        for thread in stopping:
            thread.start()
        for thread in stopping:
            thread.join()

    def _servers(self) -> tuple[LocalServer, ...]:
        return self._server, self.results_host.server, self.storage_host.server

    @property
    def api(self) -> str:
        return self._server.url

    @property
    def results(self) -> str:
        return self.results_host.server.url

    @property
    def storage(self) -> str:
        return self.storage_host.server.url

    # -- arranging the world

    def run(
        self,
        head_branch: str = "main",
        workflow: str = ".github/workflows/ci.yml",
        event: str = "push",
        status: str = "completed",
        conclusion: str | None = "success",
        created_at: datetime | None = None,
        run_attempt: int = 1,
        fork: bool = False,
    ) -> Run:
        with self._lock:
            workflow_id = self.workflows.setdefault(workflow, 161335 + len(self.workflows))
            self._next += 1
            run = Run(
                id=30433640 + self._next,
                workflow_id=workflow_id,
                path=workflow,
                head_branch=head_branch,
                head_sha=secrets.token_hex(20),
                event=event,
                status=status,
                conclusion=conclusion,
                created_at=created_at or datetime.now(UTC),
                run_attempt=run_attempt,
                fork=fork,
            )
            self.runs[run.id] = run
            self._backends[run.backend] = run.id
        return run

    def runtime_token(self, run: Run, job: str = "") -> str:
        """ACTIONS_RUNTIME_TOKEN of a job of `run`."""
        return self.results_host.token(run.backend, job or str(uuid.uuid5(uuid.NAMESPACE_URL, str(run.id))))

    def comment(self, issue: int, body: str, login: str = BOT_LOGIN) -> Comment:
        with self._lock:
            return self._add_comment(issue, body, {"login": login, "id": 583231, "type": "User"})

    def _add_comment(self, issue: int, body: str, user: dict[str, object]) -> Comment:
        now = datetime.now(UTC)
        made = Comment(1_000_000 + len(self.comments) + 1, issue, body, user, now, now)
        self.comments.append(made)
        return made

    def fail(
        self,
        status: int,
        times: int = 1,
        method: str = "",
        path: str = "",
        message: str = "injected",
        body: bytes | None = None,
        **headers: str,
    ) -> None:
        """The next `times` API requests with `method` and `path` in their path get `status` with
        `headers` (retry_after="1" is Retry-After) and a basic-error `message` (or `body`)."""
        named = {k.replace("_", "-"): v for k, v in headers.items()}
        error = {"message": message, "documentation_url": DOCS, "status": str(status)}
        self.faults.add(Fault(status, times, named, body or json.dumps(error).encode(), method, path))

    def artifact(self, run: Run, name: str, content: bytes, expired: bool = False) -> Stored:
        """An artifact of `run` already finalized, whose zip is `content`."""
        storage, results = self.storage_host, self.results_host
        with self._lock:
            blob = f"/productionresults/actions-results/{uuid.uuid4()}.zip"
            storage.blobs[blob], storage.types[blob] = content, "application/zip"
            results.next_id += 1
            stored = Stored(
                name=name,
                run_backend=run.backend,
                job_backend=str(uuid.uuid4()),
                blob=blob,
                version=4,
                expires_at=datetime.now(UTC) + timedelta(days=90),
                id=results.next_id,
                size=len(content),
                digest=f"sha256:{hashlib.sha256(content).hexdigest()}",
                finalized=True,
                expired=expired,
            )
            results.artifacts.append(stored)
        return stored

    def artifacts_of(self, run: Run) -> list[Stored]:
        """The run's finalized zipped artifacts (run folders); its pages uploaded unzipped are in
        `pages_of`."""
        return [a for a in self.every_artifact_of(run) if not a.mime_type]

    def pages_of(self, run: Run) -> list[Stored]:
        """The run's finalized artifacts stored as single files (report.html, comparison.html)."""
        return [a for a in self.every_artifact_of(run) if a.mime_type]

    def every_artifact_of(self, run: Run) -> list[Stored]:
        return [a for a in self.results_host.artifacts if a.finalized and a.run_backend == run.backend]

    # -- the REST API

    def route(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Answer:
        self.seen.append(Seen(method, target, headers))
        parts = urlsplit(target)
        query = parse_qsl(parts.query)
        fault = self.faults.take(method, parts.path)
        if fault is not None:
            return fault[0], {**self._limits(), **fault[1]}, fault[2]
        if headers.get("x-github-api-version", "2022-11-28") not in ("2022-11-28", "2026-03-10"):
            return self._problem(400, "Unsupported 'X-GitHub-Api-Version' header.")
        authorization = headers.get("authorization", "")
        token = self.tokens.get(authorization.removeprefix("Bearer ").removeprefix("token "))
        if token is None:
            return self._problem(401, "Bad credentials" if authorization else "Requires authentication")
        if parts.path == "/user":
            if token.app:
                return self._problem(403, NOT_INTEGRATION)
            return self._json({"login": token.login, "id": token.id, "type": "User", "site_admin": False})
        path = self._local(parts.path)
        if path is None:
            return self._problem(404, "Not Found")
        segments = path.strip("/").split("/")
        with self._lock:
            match method, segments:
                case "GET", ["actions", "workflows", workflow, "runs"]:
                    return self._runs(path, query, workflow)
                case "GET", ["actions", "runs", run_id] if run_id.isdigit() and int(run_id) in self.runs:
                    return self._json(self._run(self.runs[int(run_id)]))
                case "GET", ["actions", "runs", run_id, "artifacts"] if run_id.isdigit():
                    return self._artifacts(path, query, int(run_id))
                case "GET", ["actions", "artifacts", ident] if self._artifact(ident):
                    return self._json(self._artifact_json(self._artifact(ident)))  # type: ignore[arg-type]
                case "GET", ["actions", "artifacts", ident, "zip"]:
                    return self._download(ident)
                case "GET", ["issues", number, "comments"] if number.isdigit():
                    found = [self._comment_json(c) for c in self.comments if c.issue == int(number)]
                    return self._paged(path, query, found, None)
                case "POST", ["issues", number, "comments"] if number.isdigit():
                    return self._post(token, int(number), body)
                case "PATCH", ["issues", "comments", ident] if ident.isdigit():
                    return self._patch(token, int(ident), body)
        return self._problem(404, "Not Found")

    def _local(self, path: str) -> str | None:
        """The path below /repos/{owner}/{repo} or /repositories/{id}; None for another repository."""
        for prefix in (f"/repos/{self.repository}/", f"/repositories/{self.repository_id}/"):
            if path.startswith(prefix):
                return path.removeprefix(prefix.rstrip("/"))
        return None

    def _limits(self) -> dict[str, str]:
        reset = int((datetime.now(UTC) + timedelta(hours=1)).timestamp())
        return {
            "x-ratelimit-limit": "1000",
            "x-ratelimit-remaining": "999",
            "x-ratelimit-used": "1",
            "x-ratelimit-reset": str(reset),
            "x-ratelimit-resource": "core",
            "x-github-api-version-selected": "2022-11-28",
        }

    def _json(self, data: object, status: int = 200, headers: dict[str, str] | None = None) -> Answer:
        answer = {"Content-Type": "application/json; charset=utf-8", **self._limits(), **(headers or {})}
        return status, answer, json.dumps(data).encode()

    def _problem(self, status: int, message: str, **extra: object) -> Answer:
        return self._json(
            {"message": message, "documentation_url": DOCS, "status": str(status), **extra}, status
        )

    def _paged(
        self, path: str, query: list[tuple[str, str]], items: list[dict[str, object]], key: str | None
    ) -> Answer:
        """One page of `items` (per_page default 30, at most 100) with GitHub's Link header;
        `key` wraps the page as {"total_count": n, key: [...]}."""
        params = dict(query)
        per_page = min(100, max(1, int(params.get("per_page", "30"))))
        page = max(1, int(params.get("page", "1")))
        last = max(1, -(-len(items) // per_page))
        chosen = items[(page - 1) * per_page : page * per_page]
        kept = [(k, v) for k, v in query if k != "page"]

        def address(number: int) -> str:
            return (
                f"<{self.api}/repositories/{self.repository_id}{path}?{urlencode([*kept, ('page', number)])}>"
            )

        links = []
        if page > 1:
            links.append(f'{address(page - 1)}; rel="prev"')
        if page < last:
            links += [f'{address(page + 1)}; rel="next"', f'{address(last)}; rel="last"']
        if page > 1:
            links.append(f'{address(1)}; rel="first"')
        data: object = chosen if key is None else {"total_count": len(items), key: chosen}
        return self._json(data, headers={"Link": ", ".join(links)} if links else None)

    def _runs(self, path: str, query: list[tuple[str, str]], workflow: str) -> Answer:
        ids = {str(i): p for p, i in self.workflows.items()} | {
            p.rsplit("/", 1)[-1]: p for p in self.workflows
        }
        if workflow not in ids:
            return self._problem(404, "Not Found")
        params = dict(query)
        chosen = sorted(
            (
                r
                for r in self.runs.values()
                if r.path == ids[workflow]
                and params.get("branch", r.head_branch) == r.head_branch
                and params.get("event", r.event) == r.event
                and params.get("status", r.status) in (r.status, r.conclusion)
            ),
            key=lambda r: (r.created_at, r.id),
            reverse=True,
        )
        return self._paged(path, query, [self._run(r) for r in chosen], "workflow_runs")

    def _run(self, run: Run) -> dict[str, object]:
        base = f"{self.api}/repos/{self.repository}/actions/runs/{run.id}"
        repository = {
            "id": self.repository_id,
            "full_name": self.repository,
            "name": self.repository.split("/")[1],
        }
        head = (
            {"id": 99, "full_name": "someone/hello-world", "name": "hello-world"} if run.fork else repository
        )
        return {
            "id": run.id,
            "name": run.name,
            "node_id": f"WFR_{run.id}",
            "head_branch": run.head_branch,
            "head_sha": run.head_sha,
            "path": run.path,
            "display_title": "A change",
            "run_number": run.id % 1000,
            "event": run.event,
            "status": run.status,
            "conclusion": run.conclusion,
            "workflow_id": run.workflow_id,
            "check_suite_id": run.id + 7,
            "url": base,
            "html_url": f"https://github.com/{self.repository}/actions/runs/{run.id}",
            "pull_requests": [],
            "created_at": stamp(run.created_at),
            "updated_at": stamp(run.created_at),
            "run_attempt": run.run_attempt,
            "run_started_at": stamp(run.created_at),
            "jobs_url": f"{base}/jobs",
            "logs_url": f"{base}/logs",
            "check_suite_url": f"{self.api}/repos/{self.repository}/check-suites/{run.id + 7}",
            "artifacts_url": f"{base}/artifacts",
            "cancel_url": f"{base}/cancel",
            "rerun_url": f"{base}/rerun",
            "workflow_url": f"{self.api}/repos/{self.repository}/actions/workflows/{run.workflow_id}",
            "head_commit": {"id": run.head_sha, "tree_id": run.head_sha, "message": "A change"},
            "repository": repository,
            "head_repository": head,
            "head_repository_id": head["id"],
        }

    def _artifact(self, ident: str) -> Stored | None:
        return next((a for a in self.results_host.artifacts if a.finalized and str(a.id) == ident), None)

    def _artifact_json(self, artifact: Stored) -> dict[str, object]:
        run = self.runs[self._backends[artifact.run_backend]]
        url = f"{self.api}/repos/{self.repository}/actions/artifacts/{artifact.id}"
        expired = artifact.expired or artifact.expires_at < datetime.now(UTC)
        return {
            "id": artifact.id,
            "node_id": f"MDg6QXJ0aWZhY3Q{artifact.id}",
            "name": artifact.name,
            "size_in_bytes": artifact.size,
            "url": url,
            "archive_download_url": f"{url}/zip",
            "expired": expired,
            "created_at": stamp(artifact.created_at),
            "updated_at": stamp(artifact.created_at),
            "expires_at": stamp(artifact.expires_at),
            "digest": artifact.digest,
            "workflow_run": {
                "id": run.id,
                "repository_id": self.repository_id,
                "head_repository_id": 99 if run.fork else self.repository_id,
                "head_branch": run.head_branch,
                "head_sha": run.head_sha,
            },
        }

    def _artifacts(self, path: str, query: list[tuple[str, str]], run_id: int) -> Answer:
        if run_id not in self.runs:
            return self._problem(404, "Not Found")
        name = dict(query).get("name")
        chosen = sorted(
            (a for a in self.artifacts_of(self.runs[run_id]) if name is None or a.name == name),
            key=lambda a: a.id,
            reverse=True,
        )
        return self._paged(path, query, [self._artifact_json(a) for a in chosen], "artifacts")

    def _download(self, ident: str) -> Answer:
        artifact = self._artifact(ident)
        if artifact is None:
            return self._problem(404, "Not Found")
        if artifact.expired or artifact.expires_at < datetime.now(UTC):
            return self._problem(410, "Artifact has expired")
        location = self.storage_host.sign(artifact.blob, "r", 60)
        return 302, {**self._limits(), "Location": location, "Content-Type": "text/html;charset=utf-8"}, b""

    def _comment_json(self, comment: Comment) -> dict[str, object]:
        url = f"{self.api}/repos/{self.repository}/issues/comments/{comment.id}"
        return {
            "id": comment.id,
            "node_id": f"IC_{comment.id}",
            "url": url,
            "html_url": f"https://github.com/{self.repository}/pull/{comment.issue}#issuecomment-{comment.id}",
            "issue_url": f"{self.api}/repos/{self.repository}/issues/{comment.issue}",
            "body": comment.body,
            "user": {**comment.user, "node_id": "MDQ6VXNlcjE=", "site_admin": False},
            "created_at": stamp(comment.created_at),
            "updated_at": stamp(comment.updated_at),
            "author_association": "NONE" if comment.user.get("type") == "Bot" else "MEMBER",
            "performed_via_github_app": None,
            "reactions": {"url": f"{url}/reactions", "total_count": 0},
        }

    def _body(self, body: bytes) -> str | None:
        try:
            text = json.loads(body).get("body")
        except (ValueError, AttributeError):
            return None
        return text if isinstance(text, str) else None

    def _too_long(self) -> Answer:
        error = {
            "resource": "IssueComment",
            "code": "unprocessable",
            "field": "data",
            "message": "Body is too long (maximum is 65536 characters)",
        }
        return self._problem(422, "Validation Failed", errors=[error])

    def _post(self, token: Token, issue: int, body: bytes) -> Answer:
        if not token.write:
            return self._problem(403, NOT_INTEGRATION)
        text = self._body(body)
        if text is None:
            return self._problem(422, 'Invalid request.\n\n"body" wasn\'t supplied.')
        if len(text) > 65536:
            return self._too_long()
        user = BOT if token.app else {"login": token.login, "id": token.id, "type": "User"}
        made = self._add_comment(issue, text, dict(user))
        return self._json(self._comment_json(made), 201, {"Location": str(self._comment_json(made)["url"])})

    def _patch(self, token: Token, ident: int, body: bytes) -> Answer:
        if not token.write:
            return self._problem(403, NOT_INTEGRATION)
        found = next((c for c in self.comments if c.id == ident), None)
        if found is None:
            return self._problem(404, "Not Found")
        text = self._body(body)
        if text is None:
            return self._problem(422, "Invalid request.")
        if len(text) > 65536:
            return self._too_long()
        found.body, found.updated_at = text, datetime.now(UTC)
        return self._json(self._comment_json(found))
