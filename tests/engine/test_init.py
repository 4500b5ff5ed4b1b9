"""`convy init` (docs/action.md): it writes a `.gitignore` with `results/` (or adds the line to one
that is there, the one file it may change), and its workflow runs `push` on the default branch
only — the repository's, when git knows it — so a feature branch's push runs nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from tests.support.command import convy


def workflow(folder: Path) -> dict[object, object]:
    loaded: dict[object, object] = yaml.safe_load(
        (folder / ".github" / "workflows" / "convy.yml").read_text()
    )
    return loaded


def test_init_ignores_results_and_pushes_run_on_main_only(tmp_path: Path) -> None:
    done = convy("init", "starter", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "starter" / ".gitignore").read_text().split() == ["results/"]
    on = workflow(tmp_path / "starter")[True]  # YAML 1.1 reads the key `on` as true
    assert on == {"push": {"branches": ["main"]}, "pull_request": None}  # type: ignore[comparison-overlap]


def test_init_adds_results_to_a_gitignore_that_is_there_and_takes_git_s_default_branch(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "repo"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "config", "init.defaultBranch", "trunk"], check=True)
    (folder / ".gitignore").write_text("node_modules/\n")
    done = convy("init", str(folder), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (folder / ".gitignore").read_text() == "node_modules/\nresults/\n"
    assert workflow(folder)[True]["push"] == {"branches": ["trunk"]}  # type: ignore[index]
    again = convy("init", str(folder), cwd=tmp_path)
    assert again.returncode == 2 and "never overwrites" in again.stderr
    assert (folder / ".gitignore").read_text() == "node_modules/\nresults/\n"
