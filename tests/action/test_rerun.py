"""Re-runs of a workflow run (GITHUB_RUN_ATTEMPT > 1), against the local GitHub stand-in: the
unfinished run of an earlier attempt — its artifact, or its partial folder in the workspace — is
resumed (only the missing attempts are played, in new conversations) and its artifact replaced;
a finished or hostile one is left alone and a new run is played."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from tests.action.folders import hostile
from tests.servers.github import FakeGitHub
from tests.support.job import Job
from tests.support.job import cancelled as cancelled_job


def cancelled(job: Job) -> Path:
    """Attempt 1 of the job, cancelled (SIGTERM) after its second attempt line: its folder."""
    cancelled_job(job, after="[2/12]")
    (folder,) = (job.workspace / "results" / "support").iterdir()
    return folder


def attempt_lines(folder: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (folder / "attempts.jsonl").read_text().splitlines() if line]


def unzipped(content: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def second_attempt(fake: FakeGitHub, first: Job, root: Path) -> Job:
    """Attempt 2 of the same workflow run, as GitHub-hosted runners give it: a new workspace."""
    job = Job(fake, root, 10, run=first.run, job="attempt-2", concurrency="1", baseline="none")
    job.environ["GITHUB_RUN_ATTEMPT"] = "2"
    return job


def test_a_rerun_resumes_the_unfinished_run_of_the_earlier_attempts_artifact_and_replaces_it(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    first = Job(fake, tmp_path, 10, concurrency="1", baseline="none")
    partial = attempt_lines(cancelled(first))
    (earlier,) = fake.artifacts_of(first.run)
    assert json.loads(unzipped(fake.storage_host.blobs[earlier.blob])["run.json"])["status"] == "interrupted"
    job = second_attempt(fake, first, tmp_path)
    code, log = job.in_process()
    assert code == 0, log
    assert "resumes the unfinished run of artifact 'convy-support'" in log
    assert f"convy: {12 - len(partial)} attempts of 12 to play" in log, "only the missing attempts"
    (folder,) = (job.workspace / "results" / "support").iterdir()
    lines = attempt_lines(folder)
    assert lines[: len(partial)] == partial, "what the earlier attempt recorded is kept as it was"
    keys = [(line["scenario"], line["index"]) for line in lines]
    assert len(keys) == 12 and len(set(keys)) == 12
    conversations = [line["conversation"] for line in lines]
    assert len(set(conversations)) == 12
    (replaced,) = fake.artifacts_of(first.run)
    assert replaced.name == "convy-support" and replaced.id != earlier.id
    files = unzipped(fake.storage_host.blobs[replaced.blob])
    assert json.loads(files["run.json"])["status"] == "finished"
    assert files["attempts.jsonl"].count(b"\n") == 12 and "run.lock" not in files
    assert job.outputs()["artifact-id"] == str(replaced.id)


def test_a_rerun_on_the_same_workspace_resumes_the_partial_folder_left_there(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    job = Job(fake, tmp_path, 10, concurrency="1", baseline="none")
    folder = cancelled(job)
    partial = attempt_lines(folder)
    job.environ["GITHUB_RUN_ATTEMPT"] = "2"
    job.environ["ACTIONS_RUNTIME_TOKEN"] = fake.runtime_token(job.run, "job-of-attempt-2")
    code, log = job.in_process()
    assert code == 0, log
    assert "resumes the partial run folder this workflow run left in the workspace" in log
    assert f"convy: {12 - len(partial)} attempts of 12 to play" in log
    assert list((job.workspace / "results" / "support").iterdir()) == [folder]
    assert len(attempt_lines(folder)) == 12
    (replaced,) = fake.artifacts_of(job.run)
    assert json.loads(unzipped(fake.storage_host.blobs[replaced.blob])["run.json"])["status"] == "finished"


def test_a_rerun_after_a_finished_attempt_plays_a_new_run_and_keeps_the_earlier_artifact(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    first = Job(fake, tmp_path, 10, repeat="1", baseline="none")
    code, log = first.in_process()
    assert code == 0, log
    (earlier,) = fake.artifacts_of(first.run)
    job = second_attempt(fake, first, tmp_path)
    job.environ["INPUT_REPEAT"] = "1"
    code, log = job.in_process()
    assert code == 0, log
    assert "holds a finished run" in log and "convy: 4 attempts of 4 to play" in log
    assert "an earlier attempt of this workflow run uploaded artifact convy-support" in log
    assert [a.id for a in fake.artifacts_of(first.run)] == [earlier.id]
    assert len(list((job.workspace / "results" / "support").iterdir())) == 1


def test_a_hostile_artifact_of_an_earlier_attempt_is_refused_with_a_warning_and_nothing_is_written(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    first = Job(fake, tmp_path, 10, concurrency="1", baseline="none")
    folder = cancelled(first)
    fake.results_host.artifacts.clear()
    fake.artifact(first.run, "convy-support", hostile(folder))
    job = second_attempt(fake, first, tmp_path)
    code, log = job.in_process()
    assert code == 0, log
    assert "::warning::re-run: the artifact 'convy-support' of an earlier attempt is refused" in log
    assert "convy: 12 attempts of 12 to play" in log
    assert not (tmp_path / "escaped.txt").exists() and not list(tmp_path.rglob("escaped.txt"))


def partial_of(tmp_path: Path, run: str, shard: dict[str, int] | None, status: str = "interrupted") -> Path:
    """A copy of the golden run folder, as an unfinished run of workflow run `run` (and `shard`)."""
    from tests.action.folders import golden

    folder = tmp_path / "results" / "support" / f"20261201T00000{len(list(tmp_path.rglob('run.json')))}Z-ab12"
    folder.mkdir(parents=True)
    data = json.loads((golden() / "run.json").read_text())
    data["status"] = status
    data["spec"]["provenance"]["workflow_run"] = run
    if shard:
        data["spec"]["shard"] = shard
    (folder / "run.json").write_text(json.dumps(data))
    (folder / "attempts.jsonl").write_bytes((golden() / "attempts.jsonl").read_bytes())
    return folder


def test_only_an_unfinished_folder_of_this_workflow_run_agent_and_shard_is_resumed(tmp_path: Path) -> None:
    from convy_action.jobs.rerun import Earlier

    partial_of(tmp_path, "41", None)  # another workflow run
    partial_of(tmp_path, "42", None, status="finished")  # finished
    partial_of(tmp_path, "42", {"index": 1, "count": 2})  # another shard
    mine = partial_of(tmp_path, "42", {"index": 2, "count": 2})
    agent = json.loads((mine / "run.json").read_text())["spec"]["agent"]

    def found(shard: str, run: str = "42") -> Path | None:
        results = tmp_path / "results" / "support"
        return (
            Earlier(
                results=results,
                run=run,
                agent=agent,
                shard=shard,
                name="",
                service=None,
                scratch=tmp_path / "s",
            )
            .found()
            .folder
        )

    assert found("2/2") == mine
    assert found("") is None, "the whole run is not a shard's"
    assert found("2/2", run="43") is None
