"""ResultsService, the artifact upload, against the local results service and storage; the upload
is read back through the REST API as a baseline would be."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from convy.demo.localserver import LocalServer
from convy.errors import ConfigurationError
from convy_action.github.artifacts import (
    ArtifactError,
    ResultsService,
    RuntimeToken,
    Uploaded,
    UploadedEarlier,
)
from convy_action.github.rest import GitHub
from convy_action.github.retries import Retries
from convy_action.github.zipped import Archive
from tests.servers.github import FakeGitHub
from tests.servers.results import Answer, Fault

FAST = Retries(attempts=3, first_wait=0.01, longest_wait=2.0, total_wait=5.0)


def run_folder(root: Path) -> Path:
    (root / "logs").mkdir(parents=True)
    (root / "run.json").write_text('{"format": 1, "status": "finished"}')
    (root / "attempts.jsonl").write_text('{"scenario": "refund", "index": 0}\n' * 40)
    (root / "logs" / "noise.bin").write_bytes(os.urandom(5000))
    return root


def service(fake: FakeGitHub, client: httpx.Client, attempt: int = 1, url: str = "") -> ResultsService:
    run = next(iter(fake.runs.values())) if fake.runs else fake.run()
    return ResultsService(
        url or fake.results, fake.runtime_token(run), client, attempt, FAST, block_size=2048
    )


def storage_puts(fake: FakeGitHub) -> list[dict[str, list[str]]]:
    return [parse_qs(urlsplit(seen.path).query) for seen in fake.storage_host.seen if seen.method == "PUT"]


def test_an_uploaded_folder_downloads_through_rest_as_the_same_files(
    fake: FakeGitHub, client: httpx.Client, tmp_path: Path
) -> None:
    run = fake.run()
    source = run_folder(tmp_path / "run")
    uploaded = service(fake, client).upload("convy-support", source)
    assert isinstance(uploaded, Uploaded)
    github = GitHub(fake.api, fake.token, fake.repository, client, FAST)
    (listed,) = github.artifacts(run.id, name="convy-support")
    assert (listed.id, listed.size_in_bytes, listed.digest) == (uploaded.id, uploaded.size, uploaded.digest)
    assert github.download(listed.id, tmp_path / "a.zip") == uploaded.size
    assert uploaded.digest == "sha256:" + hashlib.sha256((tmp_path / "a.zip").read_bytes()).hexdigest()
    with zipfile.ZipFile(tmp_path / "a.zip") as zipped:
        assert zipped.namelist()[-1] == "run.json"
    Archive(tmp_path / "a.zip").unpack(tmp_path / "back")
    for name in ("run.json", "attempts.jsonl", "logs/noise.bin"):
        assert (tmp_path / "back" / name).read_bytes() == (source / name).read_bytes()


def test_the_zip_goes_up_in_blocks_then_a_block_list(
    fake: FakeGitHub, client: httpx.Client, tmp_path: Path
) -> None:
    uploaded = service(fake, client).upload("convy-support", run_folder(tmp_path / "run"))
    assert isinstance(uploaded, Uploaded) and uploaded.size > 2 * 2048
    puts = storage_puts(fake)
    blocks = [p["blockid"][0] for p in puts if p.get("comp") == ["block"]]
    assert len(blocks) == -(-uploaded.size // 2048) and len(puts) == len(blocks) + 1
    assert puts[-1]["comp"] == ["blocklist"] and len({len(b) for b in blocks}) == 1
    assert all(len(base64.b64decode(b)) <= 64 for b in blocks)
    assert all("sig" in p for p in puts)
    assert not any("authorization" in seen.headers for seen in fake.storage_host.seen)
    stored = fake.results_host.artifacts[0]
    assert fake.storage_host.types[stored.blob] == "application/zip"


def test_the_twirp_calls_are_those_of_the_toolkit(
    fake: FakeGitHub, client: httpx.Client, tmp_path: Path
) -> None:
    run = fake.run()
    token = fake.runtime_token(run)
    results = ResultsService(fake.results + "/some/path/", token, client, 1, FAST)
    uploaded = results.upload("convy-support", run_folder(tmp_path / "run"))
    assert isinstance(uploaded, Uploaded)
    seen = fake.results_host.seen
    base = "/twirp/github.actions.results.api.v1.ArtifactService/"
    assert [s.path for s in seen] == [base + "CreateArtifact", base + "FinalizeArtifact"]
    assert all(s.headers["authorization"] == f"Bearer {token}" for s in seen)
    assert all(s.headers["content-type"] == "application/json" for s in seen)
    stored = fake.results_host.artifacts[0]
    assert stored.version == 4 and stored.run_backend == run.backend
    assert stored.expires_at - datetime.now(UTC) > timedelta(days=89)


def test_retention_days_set_the_expiry(fake: FakeGitHub, client: httpx.Client, tmp_path: Path) -> None:
    run = fake.run()
    service(fake, client).upload("convy-support", run_folder(tmp_path / "run"), retention_days=3)
    (listed,) = GitHub(fake.api, fake.token, fake.repository, client, FAST).artifacts(run.id)
    assert listed.expires_at is not None
    assert abs(listed.expires_at - (datetime.now(UTC) + timedelta(days=3))) < timedelta(minutes=1)


def test_the_same_name_again_fails_the_first_attempt(
    fake: FakeGitHub, client: httpx.Client, tmp_path: Path
) -> None:
    source = run_folder(tmp_path / "run")
    service(fake, client).upload("convy-support", source)
    with pytest.raises(ArtifactError, match="already has an artifact named 'convy-support'"):
        service(fake, client).upload("convy-support", source)


def test_a_rerun_meets_the_artifact_of_an_earlier_attempt(
    fake: FakeGitHub, client: httpx.Client, tmp_path: Path
) -> None:
    source = run_folder(tmp_path / "run")
    first = service(fake, client).upload("convy-support", source)
    puts = len(storage_puts(fake))
    again = service(fake, client, attempt=2).upload("convy-support", source)
    assert again == UploadedEarlier(name="convy-support")
    assert isinstance(first, Uploaded) and [a.id for a in fake.results_host.artifacts] == [first.id]
    assert len(storage_puts(fake)) == puts


def test_storage_server_errors_are_tried_again(
    fake: FakeGitHub, client: httpx.Client, tmp_path: Path
) -> None:
    fake.storage_host.faults.add(Fault(500, times=2, method="PUT"))
    uploaded = service(fake, client).upload("convy-support", run_folder(tmp_path / "run"))
    assert isinstance(uploaded, Uploaded)
    assert len([s for s in fake.storage_host.seen if s.method == "PUT"]) == len(storage_puts(fake))
    assert fake.results_host.artifacts[0].finalized


def test_storage_failing_for_good_is_an_error_and_nothing_is_finalized(
    fake: FakeGitHub, client: httpx.Client, tmp_path: Path
) -> None:
    fake.storage_host.faults.add(Fault(500, times=1000, method="PUT"))
    with pytest.raises(ArtifactError) as error:
        service(fake, client).upload("convy-support", run_folder(tmp_path / "run"))
    assert "500" in str(error.value) and "sig=" not in str(error.value) and "?" not in str(error.value)
    assert len(fake.storage_host.seen) == FAST.attempts
    assert [s.path.rsplit("/", 1)[1] for s in fake.results_host.seen] == ["CreateArtifact"]


def test_a_busy_results_service_is_tried_again(
    fake: FakeGitHub, client: httpx.Client, tmp_path: Path
) -> None:
    fake.results_host.faults.add(Fault(503, times=1, path="CreateArtifact", body=b'{"code":"unavailable"}'))
    fake.results_host.faults.add(
        Fault(429, times=1, path="FinalizeArtifact", body=b'{"code":"resource_exhausted"}')
    )
    assert isinstance(service(fake, client).upload("convy-support", run_folder(tmp_path / "run")), Uploaded)
    assert len(fake.results_host.seen) == 4


def test_a_refusal_of_the_results_service_is_not_tried_again(
    fake: FakeGitHub, client: httpx.Client, tmp_path: Path
) -> None:
    body = b'{"code":"invalid_argument","msg":"the name is not allowed"}'
    fake.results_host.faults.add(Fault(400, times=5, path="CreateArtifact", body=body))
    with pytest.raises(ArtifactError, match="invalid_argument the name is not allowed"):
        service(fake, client).upload("convy-support", run_folder(tmp_path / "run"))
    assert len(fake.results_host.seen) == 1


def test_a_token_the_service_does_not_know_is_refused(
    fake: FakeGitHub, client: httpx.Client, tmp_path: Path
) -> None:
    run = fake.run()
    other = FakeGitHub()  # another key: its tokens do not verify here
    forged = other.results_host.token(run.backend, "job")
    with pytest.raises(ArtifactError, match="401"):
        ResultsService(fake.results, forged, client, 1, FAST).upload(
            "convy-support", run_folder(tmp_path / "run")
        )


@pytest.mark.parametrize(
    "token",
    [
        "",
        "not-a-jwt",
        "a.b.c",
        "x." + base64.urlsafe_b64encode(b'{"scp": "Actions.GenericRead:1"}').decode() + ".y",
    ],
)
def test_a_runtime_token_without_the_results_scope_is_an_error(token: str) -> None:
    with pytest.raises(ArtifactError) as error:
        RuntimeToken(token).ids()
    assert token == "" or token not in str(error.value)


def test_the_backend_ids_come_from_the_scope(fake: FakeGitHub) -> None:
    run = fake.run()
    ids = RuntimeToken(fake.runtime_token(run, job="job-1")).ids()
    assert (ids.run, ids.job) == (run.backend, "job-1")
    assert "Actions" not in repr(RuntimeToken(fake.runtime_token(run)))


@pytest.mark.parametrize("name", ["", "a/b", "a:b", "a\nb", 'say"'])
def test_a_bad_artifact_name_is_a_configuration_error_before_any_request(
    fake: FakeGitHub, client: httpx.Client, tmp_path: Path, name: str
) -> None:
    with pytest.raises(ConfigurationError) as error:
        service(fake, client).upload(name, run_folder(tmp_path / "run"))
    assert error.value.where == "artifact-name"
    assert fake.results_host.seen == []


def camel(value: object) -> object:
    """proto3 JSON as Go's protojson writes it: lowerCamelCase keys, int64 as numbers."""
    match value:
        case dict():
            named = {
                "".join(w.title() if i else w for i, w in enumerate(k.split("_"))): v
                for k, v in value.items()
            }
            return {k: camel(v) for k, v in named.items()}
        case str() if value.isdigit():
            return int(value)
        case _:
            return value


def test_answers_in_camel_case_are_understood(fake: FakeGitHub, client: httpx.Client, tmp_path: Path) -> None:
    def route(method: str, target: str, headers: dict[str, str], body: bytes) -> Answer:
        status, answer, payload = fake.results_host.route(method, target, headers, body)
        return status, answer, json.dumps(camel(json.loads(payload))).encode()

    with LocalServer(route) as proxy:
        uploaded = service(fake, client, url=proxy.url).upload("convy-support", run_folder(tmp_path / "run"))
    assert isinstance(uploaded, Uploaded) and uploaded.id == fake.results_host.artifacts[0].id


def test_a_rerun_that_replaces_deletes_then_uploads_leaving_one_artifact_of_the_name(
    fake: FakeGitHub, client: httpx.Client, tmp_path: Path
) -> None:
    source = run_folder(tmp_path / "run")
    first = service(fake, client).upload("convy-support", source)
    again = service(fake, client, attempt=2).upload("convy-support", source, replace=True)
    assert isinstance(first, Uploaded) and isinstance(again, Uploaded) and again.id != first.id
    assert [a.id for a in fake.results_host.artifacts if a.name == "convy-support"] == [again.id]
    calls = [s.path.rsplit("/", 1)[-1] for s in fake.results_host.seen]
    assert calls[-3:] == ["DeleteArtifact", "CreateArtifact", "FinalizeArtifact"]


def test_the_results_service_refuses_a_second_artifact_of_one_name_until_it_is_deleted(
    fake: FakeGitHub, client: httpx.Client, tmp_path: Path
) -> None:
    source = run_folder(tmp_path / "run")
    service(fake, client).upload("convy-support", source)
    second = service(fake, client, attempt=2)
    assert second.upload("convy-support", source) == UploadedEarlier(name="convy-support")
    assert second.delete("convy-support") is True
    assert second.delete("convy-support") is False, "nothing left to delete"
    assert isinstance(second.upload("convy-support", source), Uploaded)
