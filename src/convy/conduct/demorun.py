"""A run folder made with `--demo`, told by what it played (the demo's agent and only the demo's
scenarios), so a follow-up of it (`label`, `resume`, `calibrate`, `report`) plays or reads the
demo's project without a flag, unless a project was named."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path

import msgspec

from convy.store.journal import RunJournal

AGENT = "support"
"""The demo's agent, as its runs record it."""
PROJECT = (Path(__file__).resolve().parents[1] / "demo" / "project").resolve()
"""The bundled demo's project."""


class DemoRun(msgspec.Struct, frozen=True):
    """The run `folder` ("" none) a command follows up on, with the `flags` and `environ` it was
    given (which may name a project of their own)."""

    folder: str
    flags: Mapping[str, object]
    environ: Mapping[str, str]

    def made(self) -> bool:
        """Whether the folder is a run of the demo's and no project was named."""
        named = "project" in self.flags or bool(self.environ.get("CONVY_PROJECT", "").strip())
        if named or not self.folder:
            return False
        spec = None
        with contextlib.suppress(Exception):
            spec = RunJournal(Path(self.folder)).header().spec
        if spec is None or spec.agent != AGENT or not spec.scenarios:
            return False
        bundled = {path.stem for path in (PROJECT / "scenarios").glob("*.yaml")}
        return all(
            entry.file.startswith("scenarios/") and Path(entry.file).stem in bundled
            for entry in spec.scenarios
        )
