"""`convy run | head`: the reader closes the pipe after its first lines. convy ends quietly (no
traceback) with 141, as a program ended by SIGPIPE does, says on stderr that the run folder is kept,
and `convy resume` finishes that folder (decision 44). A command that only prints does the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.command import convy, only_run


def piped_to_head(*args: str, cwd: Path) -> tuple[str, int, str]:
    """The command with its stdout read for one line and then closed, as `| head -1` does: that
    line, the exit code and stderr."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_"))}
    process = subprocess.Popen(
        [sys.executable, "-m", "convy", *args],
        cwd=cwd,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()
    code = process.wait(timeout=120)
    return first, code, process.stderr.read()


def test_a_run_whose_output_is_closed_ends_quietly_and_can_be_resumed(tmp_path: Path) -> None:
    first, code, err = piped_to_head("run", "--demo", cwd=tmp_path)
    assert "attempts of 12 to play" in first
    assert code == 141, err
    assert "Traceback" not in err and "BrokenPipeError" not in err
    folder = only_run(tmp_path / "results")
    assert f"the run folder is kept: finish it with `convy resume {folder}`" in err
    run = json.loads((folder / "run.json").read_text())
    assert run["status"] == "interrupted"
    assert run["reason"] == "BrokenPipeError"
    resumed = convy("resume", str(folder), "--demo", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert json.loads((folder / "run.json").read_text())["status"] == "finished"


def test_a_command_that_prints_to_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    played = convy("run", "--demo", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    folder = only_run(tmp_path / "results")
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_"))}
    reader, writer = os.pipe()
    os.close(reader)  # the reader is gone before the first line: every write meets a closed pipe
    try:
        done = subprocess.run(
            [sys.executable, "-m", "convy", "export", str(folder)],
            cwd=tmp_path,
            env=environ,
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(writer)
    assert done.returncode == 141, done.stderr
    assert done.stderr == ""
    assert (folder / "export" / "attempts.csv").exists(), "the export was written all the same"
