"""What the runner tells the action through its environment (GITHUB_*, ACTIONS_*), and the webhook
payload at GITHUB_EVENT_PATH as far as the action reads it: the pull request, its base branch, the
repository's default branch. Both are read into our types where they enter."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import msgspec

from convy import ConfigurationError, Provenance
from convy.tools import Data


class EventRepository(Data, frozen=True, kw_only=True):
    id: int = 0
    full_name: str = ""
    default_branch: str = ""


class Branch(Data, frozen=True, kw_only=True):
    """A pull request's base or head: its branch name, commit and repository."""

    ref: str = ""
    sha: str = ""
    repo: EventRepository | None = None


class EventPullRequest(Data, frozen=True, kw_only=True):
    number: int = 0
    base: Branch = Branch()
    head: Branch = Branch()


class EventIssue(Data, frozen=True, kw_only=True):
    """An issue, or a pull request seen as one (`pull_request` is then present)."""

    number: int = 0
    pull_request: dict[str, object] | None = None


class EventWorkflowRun(Data, frozen=True, kw_only=True):
    """The run a `workflow_run` event is about; its pull requests are empty for forks."""

    id: int = 0
    pull_requests: tuple[EventPullRequest, ...] = ()


class WorkflowEvent(Data, frozen=True, kw_only=True):
    """The webhook payload of the event that started the workflow (the fields the action reads)."""

    pull_request: EventPullRequest | None = None
    issue: EventIssue | None = None
    workflow_run: EventWorkflowRun | None = None
    repository: EventRepository | None = None

    def pull(self) -> EventPullRequest:
        """The pull request of the event: pull_request(_target), a comment on a pull request, or a
        workflow_run of a same-repository pull request; number 0 when there is none."""
        if self.pull_request is not None:
            return self.pull_request
        if self.issue is not None and self.issue.pull_request is not None:
            return EventPullRequest(number=self.issue.number)
        if self.workflow_run is not None and self.workflow_run.pull_requests:
            return self.workflow_run.pull_requests[0]
        return EventPullRequest()

    def default_branch(self) -> str:
        return self.repository.default_branch if self.repository is not None else ""


class RunnerVariable:
    """One of the runner's variables, read from a Context as text without surrounding blanks:
    `default` when it is unset or blank."""

    def __init__(self, name: str, default: str = "") -> None:
        self._name = name
        self._default = default

    def __get__(self, context: Context, owner: type[Context]) -> str:
        return context.variable(self._name, self._default)


class Context(msgspec.Struct, frozen=True):
    """The runner's variables in `environ`; `workspace` is where the repository is checked out."""

    environ: Mapping[str, str]
    workspace: Path

    repository = RunnerVariable("GITHUB_REPOSITORY")
    api_url = RunnerVariable("GITHUB_API_URL", "https://api.github.com")
    results_url = RunnerVariable("ACTIONS_RESULTS_URL")
    runtime_token = RunnerVariable("ACTIONS_RUNTIME_TOKEN")
    step_summary = RunnerVariable("GITHUB_STEP_SUMMARY")
    output = RunnerVariable("GITHUB_OUTPUT")
    base_ref = RunnerVariable("GITHUB_BASE_REF")

    def variable(self, name: str, default: str = "") -> str:
        """The runner's variable `name` without surrounding blanks; `default` when unset or blank."""
        return self.environ.get(name, "").strip() or default

    @property
    def run_id(self) -> int:
        value = self.variable("GITHUB_RUN_ID")
        return int(value) if value.isdigit() else 0

    @property
    def run_attempt(self) -> int:
        value = self.variable("GITHUB_RUN_ATTEMPT")
        return int(value) if value.isdigit() and int(value) > 0 else 1

    @property
    def workflow(self) -> str:
        """The file name of the running workflow, from GITHUB_WORKFLOW_REF
        (`owner/repo/.github/workflows/ci.yml@refs/heads/main` → `ci.yml`)."""
        path = self.variable("GITHUB_WORKFLOW_REF").split("@", 1)[0]
        return path.rsplit("/", 1)[-1] if "/.github/workflows/" in path else ""

    @property
    def server_url(self) -> str:
        return self.variable("GITHUB_SERVER_URL", "https://github.com").rstrip("/")

    @property
    def retention_days(self) -> int:
        """The repository's longest artifact retention (0: not told)."""
        value = self.variable("GITHUB_RETENTION_DAYS")
        return int(value) if value.isdigit() else 0

    def check(self) -> None:
        """ConfigurationError unless the variables of a workflow run are there (outside GitHub
        Actions, use --dry-run)."""
        owner, _, name = self.repository.partition("/")
        if not owner or not name or "/" in name:
            raise ConfigurationError(
                "GITHUB_REPOSITORY", "must be owner/name: outside GitHub Actions use --dry-run"
            )
        if not self.run_id:
            raise ConfigurationError(
                "GITHUB_RUN_ID", "must be the workflow run's id: outside GitHub Actions use --dry-run"
            )

    def event(self) -> WorkflowEvent:
        """The event file; an empty WorkflowEvent where there is none."""
        path = self.variable("GITHUB_EVENT_PATH")
        if not path:
            return WorkflowEvent()
        try:
            return msgspec.json.decode(Path(path).read_bytes(), type=WorkflowEvent)
        except FileNotFoundError:
            return WorkflowEvent()
        except OSError as error:
            raise ConfigurationError("GITHUB_EVENT_PATH", f"cannot be read: {error.strerror}") from None
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            raise ConfigurationError("GITHUB_EVENT_PATH", f"is not a webhook payload: {error}") from None

    def baseline_branch(self, given: str, event: WorkflowEvent) -> str:
        """Where `auto` looks: the `baseline-branch` input, else the pull request's base branch,
        else the repository's default branch; "" when none is known."""
        return given or event.pull().base.ref or self.base_ref or event.default_branch()

    def provenance(self, event: WorkflowEvent) -> Provenance:
        return Provenance(
            repository=self.repository,
            sha=self.variable("GITHUB_SHA"),
            ref=self.variable("GITHUB_REF"),
            workflow_run=str(self.run_id) if self.run_id else "",
            pull_request=event.pull().number,
        )

    def run_url(self) -> str:
        """The page of this workflow run; "" outside a workflow run."""
        if not self.repository or not self.run_id:
            return ""
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"

    def artifact_url(self, artifact_id: int) -> str:
        run = self.run_url()
        return f"{run}/artifacts/{artifact_id}" if run and artifact_id else ""

    def relative(self, path: Path) -> str:
        """`path` relative to the workspace when it is inside, else as it is."""
        resolved = path.resolve()
        workspace = self.workspace.resolve()
        return resolved.relative_to(workspace).as_posix() if resolved.is_relative_to(workspace) else str(path)
