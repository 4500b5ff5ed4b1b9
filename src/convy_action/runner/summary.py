"""The step's summary file ($GITHUB_STEP_SUMMARY), appended to and kept under the runner's limit of
1 MiB per step (a longer text is cut with a note, never dropped whole)."""

from __future__ import annotations

from pathlib import Path

import msgspec

MIB = 1024 * 1024
CUT = (
    "\n\n*The summary was cut here: a step's summary may hold at most 1 MiB. "
    "The run's artifact has all of it.*\n"
)


class JobSummary(msgspec.Struct, frozen=True):
    """The summary file at `path`, holding at most `limit` bytes of UTF-8."""

    path: Path
    limit: int = MIB

    def __post_init__(self) -> None:
        if self.limit <= len(CUT.encode()):
            raise ValueError("the limit leaves no room for the summary")

    def append(self, markdown: str) -> bool:
        """Append `markdown` (and a blank line); False when it had to be cut to fit."""
        used = self.path.stat().st_size if self.path.exists() else 0
        text = markdown.rstrip("\n") + "\n\n"
        data = text.encode()
        room = self.limit - used
        whole = len(data) <= room
        if not whole:
            kept = data[: max(0, room - len(CUT.encode()))].decode(errors="ignore")
            cut = kept[: kept.rfind("\n")] if "\n" in kept else ""
            data = (cut + CUT).encode() if room >= len(CUT.encode()) else b""
        with self.path.open("ab") as file:
            file.write(data)
        return whole
