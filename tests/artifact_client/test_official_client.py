"""The official @actions/artifact client (Node.js) against the local GitHub stand-in, both ways:
what it uploads our REST client downloads as a baseline, and what our ResultsService uploads it
downloads from the results service. This keeps the stand-in (and so our client) faithful.

Needs Node.js 20+ and npm; CI installs the client with `npm ci --prefix tests/artifact_client`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from convy_action.github.artifacts import ResultsService, Uploaded
from convy_action.github.rest import GitHub
from convy_action.github.retries import Retries
from convy_action.github.zipped import Archive
from tests.servers.github import FakeGitHub, Run

HERE = Path(__file__).resolve().parent
INSTALL = "npm ci --prefix tests/artifact_client"
FAST = Retries(attempts=3, first_wait=0.01, longest_wait=2.0, total_wait=5.0)


@pytest.fixture(scope="module")
def node() -> str:
    """The node command, with the client installed (npm ci) when node_modules is missing."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail(f"Node.js 20+ with npm is needed for this test: install it, then `{INSTALL}`")
    if not (HERE / "node_modules" / "@actions" / "artifact").is_dir():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=HERE, check=True, timeout=600)
    return node


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as servers:
        yield servers


def official(node: str, fake: FakeGitHub, run: Run, workspace: Path, *args: str) -> None:
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(workspace),
        "ACTIONS_RUNTIME_TOKEN": fake.runtime_token(run),
        "ACTIONS_RESULTS_URL": fake.results + "/",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_REPOSITORY": fake.repository,
        "GITHUB_RUN_ID": str(run.id),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    done = subprocess.run(
        [node, str(HERE / "artifact.mjs"), *args],
        env=environment,
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def run_folder(root: Path) -> Path:
    (root / "logs").mkdir(parents=True)
    (root / "run.json").write_text('{"format": 1, "status": "finished"}')
    (root / "attempts.jsonl").write_text('{"scenario": "refund", "index": 0}\n' * 200)
    (root / "logs" / "noise.bin").write_bytes(os.urandom(20_000))
    return root


def same_files(one: Path, other: Path) -> None:
    def files(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    assert files(one) == files(other) and len(files(one)) == 3


def test_what_the_official_client_uploads_downloads_through_rest(
    node: str, fake: FakeGitHub, tmp_path: Path
) -> None:
    run = fake.run()
    source = run_folder(tmp_path / "run")
    official(node, fake, run, tmp_path, "upload", "convy-support", str(source), str(tmp_path / "result.json"))
    result = json.loads((tmp_path / "result.json").read_text())
    with httpx.Client(timeout=10) as client:
        github = GitHub(fake.api, fake.token, fake.repository, client, FAST)
        (listed,) = github.artifacts(run.id, name="convy-support")
        assert listed.id == result["id"] and listed.digest == "sha256:" + result["digest"]
        github.download(listed.id, tmp_path / "a.zip")
    Archive(tmp_path / "a.zip").unpack(tmp_path / "back")
    same_files(source, tmp_path / "back")


def test_what_we_upload_the_official_client_downloads(node: str, fake: FakeGitHub, tmp_path: Path) -> None:
    run = fake.run()
    source = run_folder(tmp_path / "run")
    with httpx.Client(timeout=10) as client:
        results = ResultsService(fake.results, fake.runtime_token(run), client, 1, FAST, block_size=4096)
        uploaded = results.upload("convy-support", source)
    assert isinstance(uploaded, Uploaded)
    official(node, fake, run, tmp_path, "download", str(uploaded.id), str(tmp_path / "back"))
    same_files(source, tmp_path / "back")


def test_the_official_client_deletes_what_we_uploaded_so_a_rerun_can_upload_it_again(
    node: str, fake: FakeGitHub, tmp_path: Path
) -> None:
    """What upload-artifact's `overwrite: true` does (ListArtifacts, DeleteArtifact), against the
    stand-in: the name is free again, as our re-run's replacement expects."""
    run = fake.run()
    source = run_folder(tmp_path / "run")
    with httpx.Client(timeout=10) as client:
        first = ResultsService(fake.results, fake.runtime_token(run), client, 1, FAST).upload(
            "convy-support", source
        )
        assert isinstance(first, Uploaded)
        official(node, fake, run, tmp_path, "delete", "convy-support", str(tmp_path / "deleted.json"))
        assert json.loads((tmp_path / "deleted.json").read_text())["id"] == first.id
        assert fake.artifacts_of(run) == []
        again = ResultsService(fake.results, fake.runtime_token(run), client, 2, FAST).upload(
            "convy-support", source
        )
    assert isinstance(again, Uploaded) and [a.id for a in fake.artifacts_of(run)] == [again.id]
