"""GitHub's services as this job reaches them, made from what the runner gave: the REST API of the
repository (with the github-token) and the Actions results service (with the runner's
ACTIONS_RUNTIME_TOKEN), through one HTTP client and one policy of retries."""

from __future__ import annotations

import httpx
import msgspec

from convy_action.github.artifacts import ResultsService
from convy_action.github.rest import GitHub
from convy_action.github.retries import PATIENT, Retries
from convy_action.runner.context import Context


class Services(msgspec.Struct, frozen=True):
    """The services of the workflow run `context` describes, asked with `token` (the github-token,
    may be empty) through `client`, tried again as `retries` says."""

    context: Context
    token: str
    client: httpx.Client
    retries: Retries = PATIENT

    def rest(self) -> GitHub | None:
        """The REST API of the repository; None without a repository or a token."""
        context = self.context
        if not context.repository or not self.token:
            return None
        return GitHub(context.api_url, self.token, context.repository, self.client, self.retries)

    def results(self) -> ResultsService:
        """The results service this job uploads to and lists the workflow run's artifacts from."""
        context = self.context
        return ResultsService(
            context.results_url, context.runtime_token, self.client, context.run_attempt, self.retries
        )
