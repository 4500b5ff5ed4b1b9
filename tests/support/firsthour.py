"""What the tests of a newcomer's first hour share: the `convy` command run as a user runs it, a
run folder's attempts, and a loopback port nothing listens on."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path


def convy(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`python -m convy ARGS` in `cwd`, with no CONVY_ or INPUT_ variable of the test's own."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_"))}
    environ.update(env or {})
    command = [sys.executable, "-m", "convy", *args]
    return subprocess.run(command, cwd=cwd, env=environ, capture_output=True, text=True, timeout=timeout)


def attempts(folder: Path) -> list[dict[str, object]]:
    """The lines of a run folder's attempts.jsonl."""
    text = (folder / "attempts.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def one_run(results: Path) -> Path:
    """The only run folder under `results`."""
    runs = sorted(p for p in results.glob("*/*") if p.is_dir())
    assert len(runs) == 1, runs
    return runs[0]


def closed_port() -> int:
    """A loopback port that was free a moment ago, so nothing listens on it."""
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port: int = unused.getsockname()[1]
    return port
