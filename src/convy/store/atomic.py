"""Writing a file whole: to a temporary file in the same folder, then renamed over the old one, so a
crash or a signal mid-write never leaves half a file. (No fsync: this guards against the process
dying, which is what happens to CI jobs, not against the machine losing power; see decision 14.)"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import msgspec


class AtomicFile(msgspec.Struct, frozen=True):
    """The file at `path`, replaced whole: readers see the old content or the new, never a part.
    The temporary file (`.<name>.<random>.partial`) is removed when the writing fails."""

    path: Path

    def write_text(self, text: str) -> None:
        with self.opened() as stream:
            stream.write(text)

    def write_bytes(self, data: bytes) -> None:
        with self.opened_binary() as stream:
            stream.write(data)

    @contextlib.contextmanager
    def opened(self, newline: str | None = None) -> Iterator[IO[str]]:
        """A UTF-8 text stream to write the file's new content to; it replaces the file when the
        block ends without an error."""
        with (
            self.opened_binary() as binary,
            open(binary.fileno(), "w", encoding="utf-8", newline=newline, closefd=False) as stream,
        ):
            yield stream

    @contextlib.contextmanager
    def opened_binary(self) -> Iterator[IO[bytes]]:
        handle, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".partial", dir=self.path.parent)
        try:
            with os.fdopen(handle, "wb") as stream:
                yield stream
            os.chmod(name, 0o644)
            os.replace(name, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name)
            raise
