"""A progress display that shows nothing."""

from __future__ import annotations

from convy.play.outcome import Outcome


class _Nothing:
    def record(self, outcome: Outcome) -> None:
        return None
