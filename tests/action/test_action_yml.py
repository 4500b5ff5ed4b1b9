"""action.yml, the Dockerfile and the workflows against the contract: every setting of the action is
an input (with its description, no default but the token's), every output is declared, the image is
pinned and starts python -m convy_action, the workflows pin actions and grant least privilege."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Any

import yaml

from convy import SETTING_NAMES as ENGINE
from convy_action.runner.outputs import OUTPUTS
from convy_action.runner.settings import OWN as ACTION
from convy_action.runner.settings import ActionSettings

DESCRIPTIONS = ActionSettings.descriptions

ROOT = Path(__file__).resolve().parent.parent.parent


def loaded(path: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / path).read_text())
    return data


def test_the_inputs_are_exactly_the_settings_of_the_engine_and_the_action_in_order() -> None:
    assert list(loaded("action.yml")["inputs"]) == list(ENGINE + ACTION)


def test_each_input_is_described_by_its_setting_and_only_the_token_has_a_default() -> None:
    inputs = loaded("action.yml")["inputs"]
    for name, declared in inputs.items():
        assert declared["description"].startswith(DESCRIPTIONS[name]), name
        assert declared.get("required", False) is False, name
    defaults = {name: declared["default"] for name, declared in inputs.items() if "default" in declared}
    assert defaults == {"github-token": "${{ github.token }}"}


def test_the_outputs_are_the_contract_s() -> None:
    outputs = loaded("action.yml")["outputs"]
    assert (
        list(outputs)
        == list(OUTPUTS)
        == [
            "pass-rate",
            "baseline-pass-rate",
            "verdict",
            "run-dir",
            "report",
            "comment-url",
            "artifact-id",
            "junit",
        ]
    )
    assert all(declared["description"] for declared in outputs.values())


def test_the_action_runs_the_dockerfile_and_has_branding() -> None:
    action = loaded("action.yml")
    assert action["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert set(action["branding"]) == {"icon", "color"} and action["name"] and action["description"]


def test_the_image_is_pinned_slim_python_and_starts_the_action() -> None:
    lines = [line for line in (ROOT / "Dockerfile").read_text().splitlines() if not line.startswith("#")]
    text = "\n".join(lines)
    (base,) = re.findall(r"^FROM (\S+)", text, re.M)
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm@sha256:[0-9a-f]{64}", base)
    assert 'ENTRYPOINT ["/usr/local/bin/python", "-m", "convy_action"]' in text
    assert "PYTHONDONTWRITEBYTECODE=1" in text and "PYTHONUNBUFFERED=1" in text
    assert not re.search(r"^(USER|WORKDIR)\b", text, re.M), "the runner needs root and sets the workdir"
    assert "apt-get" not in text, "no build tools in the image"


def test_only_the_package_s_files_enter_the_build() -> None:
    rules = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]

    def enters(path: str) -> bool:
        kept = True
        for rule in rules:
            negated = rule.startswith("!")
            pattern = rule.removeprefix("!").rstrip("/")
            if fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/"):
                kept = negated
        return kept

    assert all(
        enters(p)
        for p in (
            "pyproject.toml",
            "README.md",
            "src/convy/cli.py",
            "src/convy_action/__main__.py",
            "src/convy_action/action.py",
        )
    )
    for path in (".git/config", ".venv/bin/python", "tests/conftest.py", "results/x/run.json", "action.yml"):
        assert not enters(path), path
    assert not enters("src/convy/__pycache__") and not enters("src/convy_action.egg-info")


def test_workflows_pin_actions_grant_nothing_by_default_and_time_out() -> None:
    for path in sorted((ROOT / ".github" / "workflows").glob("*.yml")):
        workflow = yaml.safe_load(path.read_text())
        assert workflow["permissions"] == {}, path.name
        for name, job in workflow["jobs"].items():
            assert 0 < job["timeout-minutes"] <= 90, f"{path.name}:{name}"
            for step in job["steps"]:
                uses = step.get("uses", "./")
                assert uses == "./" or re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", uses), uses
                if uses.startswith("actions/checkout@"):
                    assert step["with"]["persist-credentials"] is False


def test_the_self_test_uses_the_action_from_the_checkout_with_the_demo() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "self-test.yml").read_text())
    assert "pull_request" in workflow[True]  # YAML reads the key `on` as true
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {"contents": "read", "actions": "read", "pull-requests": "write"}
    (step,) = [s for s in job["steps"] if s.get("uses") == "./"]
    assert step["with"] == {"demo": True}
