"""`convy label` never writes through a symbolic link out of `labels/`: a dangling link would
create its target outside the project, a link to a file elsewhere would get that file rewritten.
Either is exit 2 naming the link, before any question, and the file elsewhere is left as it was."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from convy.play.outcome import ClaimResult, Outcome, Turn, Verdict
from convy.store.journal import RunJournal
from convy.store.runfile import FORMAT, RunFile, RunSpec, ScenarioEntry

RUN = "20261207T101010Z-abcd"


def project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "project"
    (root / "scenarios").mkdir(parents=True)
    (root / "scenarios" / "refund.yaml").write_text(
        "name: refund\nuser: You want a refund.\nclaims: [Refunds.]\n"
    )
    folder = root / "results" / "bot" / RUN
    folder.mkdir(parents=True)
    spec = RunSpec(agent="bot", scenarios=(ScenarioEntry(name="refund", fingerprint="f"),), repeat=1)
    run = RunFile(format=FORMAT, spec=spec, status="finished", started="2026-12-07T10:10:10Z")
    turn = Turn(user="My order is late.", agent="Here is a refund.", seconds=0.1)
    decision = Verdict(holds=True, claims=(ClaimResult(claim="Refunds.", passed=True, reason="said"),))
    attempt = Outcome(
        scenario="refund", index=0, fingerprint="f", turns=(turn,), seconds=0.1, decision=decision
    )
    RunJournal(folder).write(run, [attempt])
    return root, folder


def labelled(root: Path, folder: Path) -> subprocess.CompletedProcess[str]:
    """`convy label RUN` with a terminal on stdin, answering every question with y."""
    master, slave = pty.openpty()
    os.write(master, b"y\ny\ny\n")
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_"))}
    try:
        return subprocess.run(
            [sys.executable, "-m", "convy", "label", str(folder)],
            stdin=slave,
            capture_output=True,
            text=True,
            cwd=root,
            env=environ,
            timeout=60,
        )
    finally:
        os.close(slave)
        os.close(master)


@pytest.mark.parametrize("kept", [False, True], ids=["dangling", "to-a-file-elsewhere"])
def test_a_link_out_of_labels_is_refused_and_nothing_is_written_through_it(
    tmp_path: Path, kept: bool
) -> None:
    root, folder = project(tmp_path)
    elsewhere = tmp_path / "elsewhere" / "victim.yaml"
    elsewhere.parent.mkdir()
    if kept:
        elsewhere.write_text("precious: true\n")
    (root / "labels").mkdir()
    link = root / "labels" / f"{RUN}.yaml"
    link.symlink_to(elsewhere)
    done = labelled(root, folder)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"labels/{RUN}.yaml" in done.stderr and "symbolic link" in done.stderr
    assert "] > " not in done.stdout, "refused before any question"
    assert link.is_symlink()
    if kept:
        assert elsewhere.read_text() == "precious: true\n"
    else:
        assert not elsewhere.exists()
