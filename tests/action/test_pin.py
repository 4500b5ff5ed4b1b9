"""A pin that works (DESIGN §14.3): every `uses: convy/action@<sha>` in the README, the docs and the
workflow `convy init` writes names a commit of this repository whose action.yml has every input that
workflow gives the action — checked against the repository's history, so a recipe never pins a
release that lacks what it uses."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.support.docs import blocks

ROOT = Path(__file__).resolve().parent.parent.parent
TEMPLATE = ROOT / "src" / "convy" / "template" / ".github" / "workflows" / "convy.yml"
PIN = re.compile(r"uses: convy/action@([0-9a-f]{40}) # (v\d+\.\d+\.\d+)")


def workflows() -> dict[str, str]:
    """Every workflow that uses the action: the template, and the yaml blocks of the README and the docs."""
    found = {"the template": TEMPLATE.read_text()}
    for block in blocks("yaml"):
        if re.search(r"uses: convy/action@[0-9a-f]{40}", block.text):
            found[block.where] = block.text
    return found


def used(workflow: str) -> dict[str, set[str]]:
    """The inputs each pinned ref is given: {sha: {input, ...}}."""
    given: dict[str, set[str]] = {}
    data: Any = yaml.safe_load(workflow)
    jobs = data.get("jobs", {}) if isinstance(data, dict) and "jobs" in data else {"job": {"steps": data}}
    for job in jobs.values():
        for step in job.get("steps") or []:
            uses = str(step.get("uses", ""))
            if uses.startswith("convy/action@"):
                given.setdefault(uses.split("@", 1)[1], set()).update((step.get("with") or {}).keys())
    return given


def inputs_at(sha: str) -> set[str]:
    shown = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{sha}:action.yml"], capture_output=True, text=True, check=False
    )
    assert shown.returncode == 0, (
        f"commit {sha} (or its action.yml) is not in this repository's history: {shown.stderr.strip()} "
        "(this test needs a full clone)"
    )
    declared: dict[str, Any] = yaml.safe_load(shown.stdout)
    return set(declared["inputs"])


def test_every_pin_has_a_version_comment_and_every_input_it_is_given() -> None:
    every = workflows()
    assert len(every) >= 4, "the template and the docs' recipes"
    for where, workflow in every.items():
        pins = [line for line in workflow.splitlines() if "uses: convy/action@" in line]
        assert pins and all(PIN.search(line) for line in pins), f"{where}: {pins}"
        for sha, given in used(workflow).items():
            missing = given - inputs_at(sha)
            assert not missing, (
                f"{where} gives {sorted(missing)} to convy/action@{sha}, whose action.yml lacks them"
            )


def test_the_readme_and_the_template_pin_the_same_release() -> None:
    pins = {
        PIN.search(line).groups()
        for text in workflows().values()
        for line in text.splitlines()
        if PIN.search(line)
    }  # type: ignore[union-attr]
    assert len(pins) == 1, pins
