"""Follow-up commands work on a demo run (the first hour): `convy resume`, `convy report`, `convy
calibrate` and `convy label` given a run folder made with `--demo`, in a folder with no project of
its own, find the demo's project with no flag; a project named still wins."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.support.command import convy
from tests.support.command import only_run as one_run


def test_follow_ups_of_a_demo_run_find_the_demo_project(tmp_path: Path) -> None:
    played = convy("run", "--demo", "--repeat", "1", cwd=tmp_path)
    assert played.returncode in (0, 1), played.stdout + played.stderr
    folder = one_run(tmp_path / "results")
    for args in (("resume", str(folder)), ("report", str(folder)), ("calibrate",)):
        done = convy(*args, cwd=tmp_path)
        assert done.returncode in (0, 1), f"{args}: {done.stdout}{done.stderr}"
        assert "no scenario files" not in done.stderr
    master, slave = pty.openpty()
    os.write(master, b"q\n")
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_"))}
    try:
        labelled = subprocess.run(
            [sys.executable, "-m", "convy", "label", str(folder), "--count", "1"],
            stdin=slave,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=environ,
            timeout=60,
        )
    finally:
        os.close(slave)
        os.close(master)
    assert labelled.returncode == 0, labelled.stdout + labelled.stderr
    assert "1 attempt of run" in labelled.stdout and str(tmp_path / "labels") in labelled.stdout
    named = convy("resume", str(folder), "--project", str(tmp_path), cwd=tmp_path)
    assert named.returncode == 2 and "no scenario files" in named.stderr, "a project named still wins"
