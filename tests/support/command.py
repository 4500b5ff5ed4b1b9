"""The `convy` command as a user runs it, and what it leaves in the run folder it writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def convy(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_"))}
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "convy", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def lines(folder: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (folder / "attempts.jsonl").read_text().splitlines() if line.strip()]


def only_run(results: Path) -> Path:
    runs = sorted(p for p in results.glob("*/*") if p.is_dir())
    assert len(runs) == 1, runs
    return runs[0]
