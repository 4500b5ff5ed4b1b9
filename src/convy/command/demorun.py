"""The demo: its servers started and its settings put over the command's for `--demo`, and a run
folder made with `--demo`, told by what it played (the demo's agent and only the demo's scenarios),
so a follow-up command given such a folder (`label`, `resume`, `calibrate`, `report`) finds the
demo's project without a flag, unless a project was named."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path

import convy

AGENT = "support"
"""The demo's agent, as its runs record it."""


class Demo:
    """The demo played or read with the command's `flags` and `environ`."""

    def __init__(self, flags: Mapping[str, object], environ: Mapping[str, str]) -> None:
        self.flags = dict(flags)
        self.environ = dict(environ)

    def started(self, stack: contextlib.ExitStack) -> tuple[dict[str, object], dict[str, str]]:
        """The flags and environment of a command played against the demo's servers, started on
        `stack`: its project and scripted models over the flags given, results kept in the current
        folder."""
        demo = stack.enter_context(convy.DemoServers())
        results = Path.cwd() / str(self.flags.get("results", "results"))
        flags = {**demo.flags(), **self.flags, "results": str(results), "project": str(demo.project)}
        return flags, {**self.environ, **demo.environ()}

    @property
    def named(self) -> bool:
        """Whether a project was named (flag or CONVY_PROJECT): then no folder makes it the demo's."""
        return "project" in self.flags or bool(self.environ.get("CONVY_PROJECT", "").strip())

    def made(self, folder: Path) -> bool:
        """Whether `folder` is a run of the demo's and no project was named."""
        if self.named:
            return False
        spec = None
        with contextlib.suppress(Exception):
            spec = convy.RunJournal(folder).header().spec
        if spec is None or spec.agent != AGENT or not spec.scenarios:
            return False
        bundled = {path.stem for path in (self.project / "scenarios").glob("*.yaml")}
        return all(
            entry.file.startswith("scenarios/") and Path(entry.file).stem in bundled
            for entry in spec.scenarios
        )

    def found(self, results: Path) -> bool:
        """Whether the current folder has no project of its own (no scenarios) and `results` holds
        a run of the demo's, none being named."""
        if self.named or (Path.cwd() / "scenarios").exists():
            return False
        return any(self.made(folder) for folder in sorted((results / AGENT).glob("*")) if folder.is_dir())

    @property
    def project(self) -> Path:
        return convy.DemoServers().project
