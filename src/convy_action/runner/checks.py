"""What the settings ask of this job, held against what the runner gave, before anything is played
or asked of GitHub: a merge where one cannot be followed, GitHub to be asked without a token. Each
refusal is a ConfigurationError naming the setting (exit 2)."""

from __future__ import annotations

import msgspec

from convy import ConfigurationError, Slice
from convy_action.runner.context import Context, WorkflowEvent
from convy_action.runner.settings import ActionSettings


class Checks(msgspec.Struct, frozen=True):
    """The job's `settings`, the runner's `context` and the `event` that started the workflow."""

    settings: ActionSettings
    context: Context
    event: WorkflowEvent

    def merge(self, part: Slice) -> None:
        """ConfigurationError when `merge` cannot be followed here."""
        settings, context = self.settings, self.context
        if not part.whole:
            raise ConfigurationError(
                "merge", "and shard are both set: a job is one shard (`shard: k/n`) or the merge, not both"
            )
        if settings.dry_run:
            raise ConfigurationError(
                "merge",
                "needs the shards' artifacts of a workflow run, which a dry run does not read: "
                "merge run folders on disk with `convy merge RUN… --to FOLDER`",
            )
        if not context.results_url or not context.runtime_token:
            raise ConfigurationError(
                "merge",
                "needs ACTIONS_RUNTIME_TOKEN and ACTIONS_RESULTS_URL to read the shards' artifacts "
                "(the runner gives them to actions started with `uses:`)",
            )

    def otlp(self) -> None:
        """ConfigurationError when otlp-endpoint is not a URL or an otlp-headers line not a header."""
        if self.settings.otlp_endpoint:
            from convy.runs import Collector

            lines = (self.settings.otlp_headers,)
            Collector.given(self.settings.otlp_endpoint, lines, ("otlp-endpoint", "otlp-headers"))

    def token(self) -> None:
        """ConfigurationError when GitHub must be asked (the comment, the baseline) without a token."""
        settings, event = self.settings, self.event
        if settings.dry_run or settings.github_token:
            return
        needs = []
        if settings.comment and event.pull().number and not settings.shard:
            needs.append("the pull request comment")
        if settings.baseline.strip() != "none":
            needs.append(f"the baseline ({settings.baseline.strip()})")
        if needs:
            raise ConfigurationError(
                "github-token",
                f"is empty, and {' and '.join(needs)} need it: pass the workflow's token (the default "
                "`${{ github.token }}`) with permissions `actions: read` and `pull-requests: write`, "
                "or set `baseline: none` and `comment: false`",
            )
