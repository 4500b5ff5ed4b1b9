"""Where this job's run folder and comment go, chosen once: the workflow run's artifact or nowhere
(for a dry run or a job without the runner's artifact token), the pull request's sticky comment or
nowhere (for a dry run, `comment: false` or an event without a pull request).

The stand-ins are chosen here, so nothing after it asks whether it is a dry run."""

from __future__ import annotations

import msgspec

from convy import Reviewed
from convy_action.github.services import Services
from convy_action.publish.comment import Box, CommentWhen, StickyComment
from convy_action.publish.dry import KeptFolder, ShownComment
from convy_action.publish.shelf import ArtifactShelf, Retention, Shelf
from convy_action.runner.context import Context, WorkflowEvent
from convy_action.runner.log import Log
from convy_action.runner.settings import ActionSettings


class Where(msgspec.Struct, frozen=True):
    """The job's `settings`, the runner's `context` and `event`, GitHub's `services`, and the job's
    `log` (told why a folder will not be uploaded, or is kept fewer days)."""

    settings: ActionSettings
    context: Context
    event: WorkflowEvent
    services: Services
    log: Log

    def shelf(self, name: str) -> Shelf:
        """Where the run folder goes: the workflow run's artifact `name`, or nowhere."""
        settings, context = self.settings, self.context
        if settings.dry_run:
            return KeptFolder("a dry run uploads nothing")
        if not context.results_url or not context.runtime_token:
            self.log.warning(
                "ACTIONS_RUNTIME_TOKEN or ACTIONS_RESULTS_URL is not set, so the run folder will not be "
                "uploaded (the runner gives them to actions started with `uses:`, not to `run:` steps)"
            )
            return KeptFolder("the runner gave no artifact token")
        retention = Retention(settings.retention_days, context.retention_days)
        if retention.lowered():
            self.log.warning(
                f"retention-days {retention.asked} is more than the repository allows; "
                f"the artifact is kept {retention.days()} days"
            )
        return ArtifactShelf(self.services.results(), name, retention.days())

    def box(self, agent: str, reviewed: Reviewed) -> Box:
        """Where the comment of `agent` on `reviewed` goes: the pull request's, or nowhere."""
        settings = self.settings
        number = self.event.pull().number
        github = self.services.rest()
        if settings.dry_run:
            return ShownComment("a dry run posts nothing: the comment is shown above and in comment.md")
        if not settings.comment:
            return ShownComment("comment: false")
        if not number or github is None:
            return ShownComment("the event is not about a pull request")
        held_back = CommentWhen(settings.comment_when).held_back(reviewed.comparison, reviewed.decision)
        return StickyComment(github, number, agent, key=settings.comment_key, held_back=held_back)
