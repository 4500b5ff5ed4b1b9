"""The run lock: run.lock, the flock a process holds on a run folder while it plays it, so two
processes never append to the same attempts.jsonl at once."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

import msgspec

from convy.errors import ConvyError


class RunInUse(ConvyError):
    """Another process is playing this run folder (it holds run.lock)."""


class RunLock(msgspec.Struct, frozen=True):
    """run.lock in a run's folder."""

    folder: Path

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold run.lock (an flock) while playing; the file is removed before it is let go. A lock
        taken on a file that was removed meanwhile (by the holder ending) is taken again on the
        new one, so two processes never both hold the folder."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / "run.lock"
        while True:
            lock = path.open("a+b")
            try:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as error:
                lock.close()
                raise RunInUse(f"{self.folder} is being played by another process") from error
            try:
                same = os.stat(path).st_ino == os.fstat(lock.fileno()).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            lock.close()
        try:
            yield
        finally:
            path.unlink(missing_ok=True)
            lock.close()
