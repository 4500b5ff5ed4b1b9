"""Stand-ins chosen (where.py) where the action must not (or cannot) reach GitHub: a dry run, a job
without the runner's artifact token, an event without a pull request. They take the place of
ArtifactShelf and StickyComment, so nothing after Where asks whether it is a dry run."""

from __future__ import annotations

from pathlib import Path

import msgspec

from convy_action.publish.comment import Skipped
from convy_action.publish.shelf import NotUploaded, Pages


class KeptFolder(msgspec.Struct, frozen=True):
    """The run folder is left where it is, uploaded nowhere, for the reason `why`."""

    why: str

    def store(self, folder: Path) -> NotUploaded:
        return NotUploaded(reason=self.why)

    def pages(self, folder: Path) -> Pages:
        return Pages()


class ShownComment(msgspec.Struct, frozen=True):
    """The comment is posted nowhere, for the reason `why` (the log and comment.md show it)."""

    why: str

    def put(self, text: str) -> Skipped:
        return Skipped(why=self.why)
