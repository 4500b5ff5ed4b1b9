"""Importing early what a command needs only after the run has played (the renderers): in a
background thread while the run waits on the network, so writing the report does not start with a
few hundred milliseconds of imports. It starts once the first attempt has ended: earlier, it would
slow the run's start."""

from __future__ import annotations

import importlib
import threading

import msgspec

from convy.play.bench import Journal
from convy.play.outcome import Outcome


class Prefetch(msgspec.Struct, frozen=True):
    """The modules to import ahead of need."""

    modules: tuple[str, ...] = (
        "convy.conduct.review",
        "convy.draw.markdown",
        "convy.draw.console",
        "convy.draw.report",
        "importlib.resources.readers",  # what the pages' style and script are read through
        "importlib.readers",
        "encodings.utf_16_le",  # how a comment's length is counted, as GitHub counts it
    )

    def start(self) -> threading.Thread:
        """Start importing them in a daemon thread; an import that fails here fails again, and is
        reported, where the module is used."""
        thread = threading.Thread(target=self.imported, name="convy-prefetch", daemon=True)
        thread.start()
        return thread

    def imported(self) -> None:
        for module in self.modules:
            try:
                importlib.import_module(module)
            except Exception:  # noqa: S112 - reported where the module is used
                continue


class Ahead:
    """The same journal, starting `prefetch` when the first attempt is recorded."""

    def __init__(self, journal: Journal, prefetch: Prefetch) -> None:
        self._journal = journal
        self._prefetch = prefetch
        self._started = False

    def record(self, outcome: Outcome) -> None:
        if not self._started:
            self._started = True
            self._prefetch.start()
        self._journal.record(outcome)
