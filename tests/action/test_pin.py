"""A pin that works (docs/action.md): every `uses: convy/action@<sha>` in the README, the docs
and the workflow `convy init` writes names a commit of this repository whose action.yml has every
input that workflow gives the action, every input of the documented input tables, and every
`agent-protocol` value they list — checked against the repository's history, so a recipe never pins
a release that lacks what the docs say it has."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
TEMPLATE = ROOT / "src" / "convy" / "template" / ".github" / "workflows" / "convy.yml"
BLOCK = re.compile(r"```yaml\n(.*?)```", re.S)
PIN = re.compile(r"uses: convy/action@([0-9a-f]{40}) # (v\d+\.\d+\.\d+)")


CODE = re.compile(r"`([^`]+)`")
SECTION = re.compile(r"^### ([a-z-]+)\n(.*?)(?=^### |\Z)", re.M | re.S)


def documents() -> dict[str, str]:
    """The README and every page of the docs, by name."""
    pages = sorted((ROOT / "docs").glob("**/*.md"))
    return {path.relative_to(ROOT).as_posix(): path.read_text() for path in [ROOT / "README.md", *pages]}


def workflows() -> dict[str, str]:
    """Every workflow that uses the action: the template, and the yaml blocks of the README and docs."""
    found = {"the template": TEMPLATE.read_text()}
    for name, text in documents().items():
        for number, block in enumerate(BLOCK.findall(text), start=1):
            if re.search(r"uses: convy/action@[0-9a-f]{40}", block):
                found[f"{name} yaml block {number}"] = block
    return found


def table_rows(text: str) -> list[list[str]]:
    """The rows of every table of `text` whose first heading is `input`, as their cells."""
    rows: list[list[str]] = []
    inside = False
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if not cells:
            inside = False
        elif cells[0] == "input":
            inside = True
        elif inside and not set(cells[0]) <= set("-: "):
            rows.append(cells)
    return rows


def documented() -> tuple[set[str], set[str]]:
    """The inputs the docs document, and the `agent-protocol` values they list: the rows of every
    input table, and every setting of the settings page (docs/settings.md, written from the code:
    a section `### name` per setting, naming its input and the values it takes)."""
    inputs: set[str] = set()
    protocols: set[str] = set()
    for text in documents().values():
        for cells in table_rows(text):
            named = set(CODE.findall(cells[0]))
            inputs |= named
            if "agent-protocol" in named:
                protocols |= set(CODE.findall(cells[-1]))
        for name, section in SECTION.findall(text):
            if f"input `{name}`" in section:
                inputs.add(name)
                if name == "agent-protocol":
                    takes = [line for line in section.splitlines() if line.startswith("- takes ")]
                    protocols |= {value for line in takes for value in CODE.findall(line)}
    return inputs, protocols


def pins() -> set[str]:
    """Every commit pinned anywhere: the template, the README, the docs."""
    return {
        sha
        for workflow in workflows().values()
        for sha in re.findall(r"convy/action@([0-9a-f]{40})", workflow)
    }


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


def action_at(sha: str) -> dict[str, Any]:
    """The action.yml of commit `sha`, read."""
    shown = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{sha}:action.yml"], capture_output=True, text=True, check=False
    )
    assert shown.returncode == 0, (
        f"commit {sha} (or its action.yml) is not in this repository's history: {shown.stderr.strip()} "
        "(this test needs a full clone)"
    )
    declared: dict[str, Any] = yaml.safe_load(shown.stdout)
    return declared


def inputs_at(sha: str) -> set[str]:
    return set(action_at(sha)["inputs"])


def lacking(sha: str) -> list[str]:
    """What the docs document that commit `sha`'s action.yml lacks: inputs, and `agent-protocol`
    values its description does not name."""
    inputs, protocols = documented()
    declared = action_at(sha)["inputs"]
    missing = [f"input {name}" for name in sorted(inputs - set(declared))]
    described = str((declared.get("agent-protocol") or {}).get("description", ""))
    missing += [f"agent-protocol {value}" for value in sorted(protocols) if f"`{value}`" not in described]
    return missing


def test_every_pin_has_a_version_comment_and_every_input_it_is_given() -> None:
    every = workflows()
    assert len(every) >= 4, "the template and the README's recipes"
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


def test_the_docs_input_tables_are_read() -> None:
    inputs, protocols = documented()
    assert {"agent-url", "model-key", "junit", "labels", "min-labels", "min-judge-kappa"} <= inputs
    assert {"openai-chat", "a2a", "ag-ui", "vercel-ai"} <= protocols


def test_every_pin_names_a_commit_with_every_documented_input_and_protocol() -> None:
    found = pins()
    assert found, "the template and the docs pin the action"
    for sha in sorted(found):
        missing = lacking(sha)
        assert not missing, (
            f"convy/action@{sha} is pinned, but its action.yml lacks what the docs document: {missing}"
        )


def test_this_commit_has_every_documented_input_and_protocol() -> None:
    """What a release pins: this commit's own action.yml has everything the docs document."""
    inputs, protocols = documented()
    declared = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
    assert inputs <= set(declared), sorted(inputs - set(declared))
    described = str(declared["agent-protocol"]["description"])
    assert all(f"`{value}`" in described for value in protocols), sorted(protocols)
