"""The action under an untrusted judge (decision 48): `python -m convy_action --dry-run` with no
input for min-judge-kappa plays a project whose judge passes every one of 30 labelled decisions
(κ 0.00), and gates it inconclusive by judge-untrusted (exit 3): the comment, the step summary and
the log name κ, the count and the default, and no line of them says another rule decided."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.labelled import judge, pairs, project


def test_the_action_s_default_gate_is_inconclusive_on_a_judge_with_kappa_0(tmp_path: Path) -> None:
    folder = project(tmp_path / "evals", pairs((10, 10), (20, 0)))
    summary = tmp_path / "summary.md"
    with AgentServer() as agent, ModelServer(judge) as models:
        environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_", "GITHUB_"))}
        environ |= {
            "INPUT_PROJECT": "evals",
            "INPUT_AGENT-URL": f"{agent.url}/ok",
            "INPUT_MODEL-URL": models.url,
            "INPUT_MODEL-KEY": "sk-test-key-1",
            "INPUT_JUDGE-MODEL": "judge-a",
            "INPUT_REPEAT": "2",
            "INPUT_MIN-JUDGE-KAPPA": "",
            "GITHUB_STEP_SUMMARY": str(summary),
        }
        done = subprocess.run(
            [sys.executable, "-m", "convy_action", "--dry-run"],
            cwd=tmp_path,
            env=environ,
            capture_output=True,
            text=True,
            timeout=180,
        )
    assert done.returncode == 3, done.stdout + done.stderr
    headline = "the judge's κ 0.00 on 30 labelled decisions is under min-judge-kappa 0.40 (the default)"
    assert f"convy: inconclusive (judge-untrusted): {headline}" in done.stdout
    (run,) = (folder / "results" / "agent").iterdir()
    comment = (run / "comment.md").read_text()
    assert f"**Decided by `judge-untrusted`:** {headline}." in comment
    told = summary.read_text()
    assert f"**Decided by `judge-untrusted`:** {headline}." in told
    for text in (comment, told, done.stdout):
        assert "floor" not in text.lower()
        assert not re.search(r"[Dd]ecided (by|on) (?!`?judge-untrusted)", text)
