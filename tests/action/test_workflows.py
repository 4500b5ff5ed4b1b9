"""The workflow `convy init` writes and every workflow of the README and the docs, as a team copies
them: clean under actionlint and zizmor (run here as .ci/run installs them), every action pinned by
commit with its version in a comment, one run per pull request, the baseline branch the repository's
default branch, least privilege, and forks' and Dependabot's pull requests skipped with a notice."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.docs import blocks

ROOT = Path(__file__).resolve().parent.parent.parent
TEMPLATE = ROOT / "src" / "convy" / "template" / ".github" / "workflows" / "convy.yml"
PINNED = re.compile(r"^\s*-?\s*uses:\s*([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # (v\d+(?:\.\d+){0,2})\s*$")
TOOLS = Path(sys.executable).parent


def tool(name: str) -> str:
    found = shutil.which(name, path=str(TOOLS)) or shutil.which(name)
    assert found, f"{name} is a test dependency (pyproject's test extra): install it"
    return found


def readme_workflows() -> list[str]:
    """Every workflow of the README and the docs' pages, the README's first."""
    return [block.text for block in blocks("yaml") if re.search(r"^jobs:", block.text, re.M)]


def workflows() -> list[tuple[str, str]]:
    named = [("template convy.yml", TEMPLATE.read_text())]
    return named + [(f"docs workflow {n}", block) for n, block in enumerate(readme_workflows(), 1)]


def loaded(text: str) -> dict[Any, Any]:
    data: dict[Any, Any] = yaml.safe_load(text)
    return data


def test_the_readme_shows_the_workflow_convy_init_writes_and_its_recipes() -> None:
    blocks = readme_workflows()
    assert blocks[0] == TEMPLATE.read_text()
    assert len(blocks) >= 4, "the template, a matrix, shards then merge, pull_request_target"
    assert any("merge: true" in block and "needs: shard" in block for block in blocks)
    assert any("comment-key: ${{ matrix." in block for block in blocks)


@pytest.mark.parametrize(("name", "text"), workflows(), ids=[name for name, _ in workflows()])
def test_every_workflow_is_clean_under_actionlint_and_zizmor(tmp_path: Path, name: str, text: str) -> None:
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    path = folder / "convy.yml"
    path.write_text(text)
    linted = subprocess.run(
        [tool("actionlint"), "-no-color", str(path)], capture_output=True, text=True, check=False
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr
    audited = subprocess.run(
        [tool("zizmor"), "--offline", "--quiet", "--no-progress", str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert audited.returncode == 0, audited.stdout + audited.stderr


@pytest.mark.parametrize(("name", "text"), workflows(), ids=[name for name, _ in workflows()])
def test_every_action_is_pinned_by_commit_with_its_version_and_least_privilege(name: str, text: str) -> None:
    uses = [line for line in text.splitlines() if re.match(r"^\s*-?\s*uses:", line)]
    assert uses
    for line in uses:
        assert PINNED.match(line), f"{name}: {line.strip()}"
    workflow = loaded(text)
    assert workflow["permissions"] == {}, name
    for job in workflow["jobs"].values():
        assert "permissions" in job and 0 < job["timeout-minutes"] <= 60
        granted = job["permissions"] or {}
        assert set(granted) <= {"contents", "actions", "pull-requests"}
        assert all(value in ("read", "write") for value in granted.values())
        pushes = any("git push" in str(step.get("run", "")) for step in job["steps"])  # a recipe that keeps
        assert granted.get("contents", "read") == "read" or pushes, name  # what it found may write
        assert granted.get("actions", "read") == "read"
        for step in job["steps"]:
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False


def test_the_actions_are_the_current_majors_and_the_action_is_this_release() -> None:
    text = TEMPLATE.read_text()
    pins = {found[1]: (found[2], found[3]) for line in text.splitlines() if (found := PINNED.match(line))}
    assert pins["actions/checkout"] == ("3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1")
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert pins["convy/action"][1] == f"v{version}"
    pins["mikepenz/action-junit-report"] = ("d9f48fc87bc235f7e214acf696ca5abc0a986f16", "v6.4.2")
    for own in sorted((ROOT / ".github" / "workflows").glob("*.yml")):  # as the repository pins them
        for line in own.read_text().splitlines():
            if (found := PINNED.match(line)) and found[1] not in pins:
                pins[found[1]] = (found[2], found[3])
    for block in readme_workflows():
        for line in block.splitlines():
            if found := PINNED.match(line):
                assert (found[2], found[3]) == pins[found[1]], line


def test_the_template_runs_once_per_pull_request_on_the_default_branch_and_skips_forks() -> None:
    workflow = loaded(TEMPLATE.read_text())
    triggers = workflow[True]  # YAML reads the key `on` as true
    # pushes to the default branch only (docs/action.md): `convy init` writes the repository's
    assert set(triggers) == {"push", "pull_request"} and triggers["push"]["branches"] == ["main"]
    concurrency = workflow["concurrency"]
    assert "github.event.pull_request.number" in concurrency["group"]
    assert concurrency["cancel-in-progress"] == "${{ github.event_name == 'pull_request' }}"
    jobs = workflow["jobs"]
    played, skipped = jobs["conversations"]["if"], jobs["skipped"]["if"]
    assert "github.event.repository.default_branch" in played
    for condition in (played, skipped):
        assert "github.event.pull_request.head.repo.full_name" in condition
        assert "github.event.pull_request.user.login" in condition and "dependabot[bot]" in condition
    assert jobs["skipped"]["permissions"] == {}
    (notice,) = jobs["skipped"]["steps"]
    assert notice["run"].startswith('echo "::notice title=convy skipped::')
    assert "workflow_run" in notice["run"]


def guard(condition: str, event: str, head: str, user: str, ref: str = "feature") -> bool:
    """The job's `if:` evaluated for one event (the expressions the template uses, and only them)."""
    values = {
        "github.event_name": event,
        "github.ref_name": ref,
        "github.event.repository.default_branch": "trunk",
        "github.event.pull_request.head.repo.full_name": head,
        "github.repository": "octo-org/hello-world",
        "github.event.pull_request.user.login": user,
    }
    python = condition.replace("&&", " and ").replace("||", " or ").replace("!=", " != ")
    for name, value in sorted(values.items(), key=lambda item: -len(item[0])):
        python = python.replace(name, repr(value))
    python = python.replace(" ! ", " not ")
    return bool(eval(python))  # noqa: S307 (our own workflow's condition, names replaced by literals)


@pytest.mark.parametrize(
    ("event", "head", "user", "ref", "played"),
    [
        ("pull_request", "octo-org/hello-world", "octocat", "feature", True),
        ("pull_request", "someone/hello-world", "someone", "feature", False),
        ("pull_request", "octo-org/hello-world", "dependabot[bot]", "feature", False),
        ("push", "", "", "trunk", True),
        ("push", "", "", "feature", False),
    ],
)
def test_the_guard_plays_same_repository_pull_requests_and_default_branch_pushes_only(
    event: str, head: str, user: str, ref: str, played: bool
) -> None:
    jobs = loaded(TEMPLATE.read_text())["jobs"]
    assert guard(jobs["conversations"]["if"], event, head, user, ref) is played
    assert guard(jobs["skipped"]["if"], event, head, user, ref) is (event == "pull_request" and not played)


def test_a_release_publishes_the_image_and_tags_a_commit_whose_action_runs_it(tmp_path: Path) -> None:
    workflow = loaded((ROOT / ".github" / "workflows" / "release.yml").read_text())
    assert set(workflow[True]) == {"workflow_dispatch"}
    assert workflow["permissions"] == {}
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {"contents": "write", "packages": "write"}
    assert job["if"] == "github.ref == 'refs/heads/main'"
    steps = {str(step.get("uses", step.get("name"))).split("@")[0]: step for step in job["steps"]}
    assert steps["docker/login-action"]["with"]["registry"] == "ghcr.io"
    built = steps["docker/build-push-action"]["with"]
    assert built["push"] is True and built["context"] == "." and "file" not in built
    assert built["tags"] == "ghcr.io/${{ github.repository }}:${{ inputs.version }}"
    (script,) = [step["run"] for step in job["steps"] if "git tag" in step.get("run", "")]
    # the release commit's action.yml: this repository's, its image the published one by digest
    (edit,) = [line for line in script.splitlines() if line.startswith("sed -i")]
    released = tmp_path / "action.yml"
    released.write_text((ROOT / "action.yml").read_text())
    digest = "sha256:" + "ab" * 32
    environment = {**os.environ, "IMAGE": "ghcr.io/convy/action", "DIGEST": digest}
    subprocess.run(["bash", "-c", edit.replace("action.yml", str(released))], env=environment, check=True)
    runs = loaded(released.read_text())["runs"]
    assert runs == {"using": "docker", "image": f"docker://ghcr.io/convy/action@{digest}"}
    assert 'git tag --annotate "v${VERSION}"' in script
    assert 'git tag --force --annotate "v${VERSION%%.*}"' in script


def test_convy_init_writes_the_workflow_that_lints_clean_and_names_what_ci_needs(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "convy", "init", "starter"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    written = tmp_path / "starter" / ".github" / "workflows" / "convy.yml"
    assert written.read_text() == TEMPLATE.read_text()
    for name in ("OPENAI_API_KEY", "AGENT_TOKEN", "AGENT_URL"):
        assert name in done.stdout and name in written.read_text()
    linted = subprocess.run(
        [tool("actionlint"), "-no-color", str(written)], capture_output=True, text=True, check=False
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr
    audited = subprocess.run(
        [tool("zizmor"), "--offline", "--quiet", "--no-progress", "."],
        cwd=tmp_path / "starter",
        capture_output=True,
        text=True,
        check=False,
    )
    assert audited.returncode == 0, audited.stdout + audited.stderr
