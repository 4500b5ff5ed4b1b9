"""Links that open (docs/action.md): the run's report.html and comparison.html are also uploaded as
single, unzipped artifacts named `<artifact-name>-report.html` and `-comparison.html` (version 7,
`text/html`, the file's bytes as they are), and the comment links to them with absolute URLs —
never a relative one. Where the service refuses the single-file upload, the links go to the run's
artifact and the job says why."""

from __future__ import annotations

import re
from pathlib import Path

from tests.servers.github import FakeGitHub
from tests.support.job import Job, comments

LINK = re.compile(r"\]\(<?([^)>]+)>?\)")


def links(body: str) -> list[str]:
    return LINK.findall(body)


def test_a_pull_request_run_uploads_its_pages_unzipped_and_links_them(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    base = Job(fake, tmp_path, 0, event="push")
    assert base.in_process()[0] == 0
    job = Job(fake, tmp_path, 10)
    code, log = job.in_process()
    assert code == 0, log[-3000:]
    pages = {page.name: page for page in fake.pages_of(job.run)}
    assert set(pages) == {"convy-support-report.html", "convy-support-comparison.html"}
    folder = job.workspace / job.outputs()["run-dir"]
    for page in pages.values():
        assert page.version == 7 and page.mime_type == "text/html"
        stored = fake.storage_host.blobs[page.blob]
        kind = page.name.removeprefix("convy-support-")
        assert stored == (folder / kind).read_bytes(), "stored as it is, not zipped"
        assert fake.storage_host.types[page.blob] == "text/html"
    (artifact,) = fake.artifacts_of(job.run)
    assert artifact.name == "convy-support" and not artifact.mime_type
    (body,) = comments(fake)
    found = links(body)
    assert found and all(url.startswith("https://") for url in found), found
    run = f"https://github.com/{fake.repository}/actions/runs/{job.run.id}"
    assert f"{run}/artifacts/{pages['convy-support-report.html'].id}" in found
    assert f"{run}/artifacts/{pages['convy-support-comparison.html'].id}" in found
    assert f"{run}/artifacts/{artifact.id}" in found
    assert "](report.html" not in body and "(<report.html" not in body


def test_a_service_that_refuses_single_files_leaves_links_to_the_run_s_artifact(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    fake.results_host.single_files = False
    job = Job(fake, tmp_path, 0)
    code, log = job.in_process()
    assert code == 0, log[-3000:]
    assert fake.pages_of(job.run) == []
    (artifact,) = fake.artifacts_of(job.run)
    assert "report.html was not uploaded on its own" in log and "unsupported artifact version: 7" in log
    (body,) = comments(fake)
    found = links(body)
    assert found and all(url.startswith("https://") for url in found), found
    assert f"https://github.com/{fake.repository}/actions/runs/{job.run.id}/artifacts/{artifact.id}" in found
