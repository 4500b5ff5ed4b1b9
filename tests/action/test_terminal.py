"""Nothing secret on a terminal (docs/security.md): outside GitHub Actions a dry run writes no workflow
command — no `::add-mask::` (which would print the very key it hides), no `::group::`, no
`::stop-commands::` — while under GitHub Actions it masks the key before anything else."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

KEY = "sk-laptop-secret-0123456789"


def dry_run(folder: Path, github: bool) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_", "GITHUB_"))}
    if github:
        environ["GITHUB_ACTIONS"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "convy_action", "--demo", "--dry-run", "--model-key", KEY],
        cwd=folder,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_dry_run_on_a_laptop_writes_no_workflow_command_and_no_key(tmp_path: Path) -> None:
    done = dry_run(tmp_path, github=False)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = done.stdout + done.stderr
    assert KEY not in shown
    assert not [line for line in shown.splitlines() if line.startswith("::")]
    assert "── convy: the comparison" in shown


def test_under_github_actions_the_key_is_masked_first(tmp_path: Path) -> None:
    done = dry_run(tmp_path, github=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == f"::add-mask::{KEY}"
    assert "::group::convy: the comparison" in done.stdout
