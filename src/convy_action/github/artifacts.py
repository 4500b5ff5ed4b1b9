"""The Actions results service a job uploads its artifacts to, in the protocol of @actions/artifact
v2 and later: a run folder's zip uploaded, and the current workflow run's artifacts listed and
fetched.

An upload is CreateArtifact, the zip put into the signed blob URL block by block, then
FinalizeArtifact; a fetch is ListArtifacts, then GetSignedArtifactURL, then the signed URL without a
token. The backend ids are read from ACTIONS_RUNTIME_TOKEN."""

from __future__ import annotations

import base64
import binascii
import hashlib
import tempfile
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any, TypeVar

import httpx
import msgspec

from convy import ConfigurationError
from convy.tools import Data, Tagged
from convy_action.errors import ActionError
from convy_action.github.download import AGENT, Download
from convy_action.github.retries import PATIENT, Retries, Transient
from convy_action.github.zipped import MIB, Archive

SERVICE = "github.actions.results.api.v1.ArtifactService"
FORBIDDEN = '":<>|*?\r\n\\/'
"""Characters an artifact's name may not hold (the service refuses them too)."""
STORAGE_VERSION = "2023-11-03"
T = TypeVar("T")


class ArtifactError(ActionError):
    """The upload failed; the message names the step and never holds a token or a signature."""


class BackendIds(Data, frozen=True, kw_only=True):
    """The workflow run and job as the results service knows them."""

    run: str
    job: str


class Claims(Data, frozen=True, kw_only=True):
    scp: str = ""


class RuntimeToken(msgspec.Struct, frozen=True):
    """ACTIONS_RUNTIME_TOKEN: a JWT whose `scp` claim holds `Actions.Results:<run>:<job>`."""

    text: str

    def __repr__(self) -> str:
        return "RuntimeToken(***)"

    def ids(self) -> BackendIds:
        """The backend ids of its `Actions.Results` scope (the signature is not checked)."""
        parts = self.text.split(".")
        try:
            if len(parts) != 3:
                raise ValueError("not a JWT")
            payload = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
            claims = msgspec.json.decode(payload, type=Claims)
        except (ValueError, binascii.Error, msgspec.DecodeError, msgspec.ValidationError):
            raise ArtifactError("ACTIONS_RUNTIME_TOKEN is not a readable JWT") from None
        for scope in claims.scp.split():
            fields = scope.split(":")
            if fields[0] == "Actions.Results" and len(fields) == 3 and fields[1] and fields[2]:
                return BackendIds(run=fields[1], job=fields[2])
        raise ArtifactError("ACTIONS_RUNTIME_TOKEN has no Actions.Results scope")


class Uploaded(Tagged, frozen=True, kw_only=True, tag="uploaded"):
    """The artifact is stored: its id, the zip's size and digest ("sha256:<hex>")."""

    id: int
    name: str
    size: int
    digest: str


class UploadedEarlier(Tagged, frozen=True, kw_only=True, tag="uploaded_earlier"):
    """A re-run's upload met the artifact an earlier attempt of the run already uploaded."""

    name: str


class Created(Data, frozen=True, kw_only=True):
    """CreateArtifact's answer, in either casing."""

    ok: bool = False
    signed_upload_url: str = ""
    signedUploadUrl: str = ""  # noqa: N815 (the protocol's name)


class Finalized(Data, frozen=True, kw_only=True):
    """FinalizeArtifact's answer, in either casing; int64 arrives as a string or a number."""

    ok: bool = False
    artifact_id: int = 0
    artifactId: int = 0  # noqa: N815 (the protocol's name)


class ListedArtifact(Data, frozen=True, kw_only=True):
    """An artifact of the current workflow run as ListArtifacts gives it (int64 as a string)."""

    name: str
    database_id: int = 0
    size: int = 0


class ListedArtifacts(Data, frozen=True, kw_only=True):
    artifacts: tuple[ListedArtifact, ...] = ()


class Signed(Data, frozen=True, kw_only=True):
    """GetSignedArtifactURL's answer, in either casing."""

    signed_url: str = ""
    signedUrl: str = ""  # noqa: N815 (the protocol's name)


class Deleted(Data, frozen=True, kw_only=True):
    ok: bool = False


class TwirpError(Data, frozen=True, kw_only=True):
    code: str = ""
    msg: str = ""


MIME_TYPES = {".html": "text/html", ".json": "application/json", ".txt": "text/plain", ".md": "text/markdown"}
"""The types of the single files uploaded unzipped, by extension (as the toolkit maps them)."""


class Stored(msgspec.Struct, frozen=True, kw_only=True):
    """How an artifact is stored: `version` 4 a zip (the long-proven form), 7 one file as it is, of
    `mime_type`."""

    version: int
    mime_type: str = ""


class ArtifactName(msgspec.Struct, frozen=True):
    """An artifact's name, checked as the service checks it."""

    name: str

    def check(self) -> None:
        if not self.name or any(c in FORBIDDEN for c in self.name):
            raise ConfigurationError(
                "artifact-name", 'must be non-empty, without " : < > | * ? \\ / or newlines'
            )


class ResultsService:
    """The results service whose base is `results_url` (ACTIONS_RESULTS_URL; only its origin counts),
    asked with `runtime_token` (ACTIONS_RUNTIME_TOKEN) by this run's attempt `run_attempt`
    (GITHUB_RUN_ATTEMPT). The zip goes to storage in blocks of `block_size` bytes."""

    def __init__(
        self,
        results_url: str,
        runtime_token: str,
        client: httpx.Client,
        run_attempt: int = 1,
        retries: Retries = PATIENT,
        block_size: int = 8 * MIB,
    ) -> None:
        if block_size <= 0:
            raise ValueError("the block size must be positive")
        self._results, self._token, self._client = results_url, RuntimeToken(runtime_token), client
        self._attempt, self._retries, self._block = run_attempt, retries, block_size

    def __repr__(self) -> str:
        return f"ResultsService({self._results!r})"

    @property
    def attempt(self) -> int:
        """The workflow run's attempt this job is (GITHUB_RUN_ATTEMPT)."""
        return self._attempt

    def delete(self, name: str) -> bool:
        """Delete this workflow run's artifact `name` (so the name is free for the upload that
        replaces it); False when there was none."""
        ids = self._token.ids()
        request = {"workflow_run_backend_id": ids.run, "workflow_job_run_backend_id": ids.job, "name": name}
        try:
            return self._call("DeleteArtifact", request, Deleted).ok
        except NotFound:
            return False

    def upload(
        self, name: str, folder: Path, retention_days: int = 0, replace: bool = False
    ) -> Uploaded | UploadedEarlier:
        """Zip `folder` (its files at the zip's root) and store it as the run's artifact `name`,
        kept `retention_days` days (0: the repository's default); with `replace`, the run's artifact
        of that name (an earlier attempt's) is deleted first."""
        with tempfile.TemporaryDirectory(prefix="convy-artifact-") as scratch:
            archive = Path(scratch) / "artifact.zip"
            ArtifactName(name).check()
            Archive(archive).pack(folder)  # before CreateArtifact: a failure here leaves nothing behind
            return self._uploaded(name, archive, Stored(version=4), retention_days, replace)

    def upload_file(
        self, file: Path, retention_days: int = 0, replace: bool = False
    ) -> Uploaded | UploadedEarlier:
        """Store the one `file` as it is — not zipped — as the run's artifact named for the file
        (what `actions/upload-artifact` v7 does with `archive: false`): a browser opening the
        artifact shows the file itself. A service that refuses it is an ArtifactError."""
        ArtifactName(file.name).check()
        kind = MIME_TYPES.get(file.suffix.lower(), "application/octet-stream")
        return self._uploaded(file.name, file, Stored(version=7, mime_type=kind), retention_days, replace)

    def _uploaded(
        self, name: str, content: Path, stored: Stored, retention_days: int, replace: bool
    ) -> Uploaded | UploadedEarlier:
        ids = self._token.ids()
        request: dict[str, Any] = {
            "workflow_run_backend_id": ids.run,
            "workflow_job_run_backend_id": ids.job,
            "name": name,
            "version": stored.version,
        }
        if stored.mime_type:
            request["mime_type"] = stored.mime_type
        if retention_days > 0:
            expires = datetime.now(UTC) + timedelta(days=retention_days)
            request["expires_at"] = expires.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        if replace:
            self.delete(name)
        try:
            created = self._call("CreateArtifact", request, Created)
        except AlreadyExists:
            if self._attempt > 1:
                return UploadedEarlier(name=name)
            raise ArtifactError(f"CreateArtifact: this run already has an artifact named {name!r}") from None
        url = created.signed_upload_url or created.signedUploadUrl
        if not created.ok or not url:
            raise ArtifactError("CreateArtifact: the service did not give an upload URL")
        with content.open("rb") as stream:
            size, digest = self._store(url, stream, stored.mime_type or "application/zip")
        finalized = self._call(
            "FinalizeArtifact",
            {
                "workflow_run_backend_id": ids.run,
                "workflow_job_run_backend_id": ids.job,
                "name": name,
                "size": str(size),
                "hash": digest,
            },
            Finalized,
        )
        artifact = finalized.artifact_id or finalized.artifactId
        if not finalized.ok or not artifact:
            raise ArtifactError("FinalizeArtifact: the service did not confirm the artifact")
        return Uploaded(id=artifact, name=name, size=size, digest=digest)

    def listed(self) -> tuple[ListedArtifact, ...]:
        """The finalized artifacts of the current workflow run (every job's), as the runtime token
        may read them: no GitHub token or permission is needed, so a fork's run can too."""
        ids = self._token.ids()
        request = {"workflow_run_backend_id": ids.run, "workflow_job_run_backend_id": ids.job}
        return self._call("ListArtifacts", request, ListedArtifacts).artifacts

    def fetch(self, name: str, to: Path, max_bytes: int = 512 * MIB) -> int:
        """Write the current workflow run's artifact `name` (its zip) to the file `to`, from the
        signed URL the service gives (asked without any token); its size. Over `max_bytes`, or a
        refusal, is an ArtifactError."""
        ids = self._token.ids()
        request = {"workflow_run_backend_id": ids.run, "workflow_job_run_backend_id": ids.job, "name": name}
        signed = self._call("GetSignedArtifactURL", request, Signed)
        url = signed.signed_url or signed.signedUrl
        if not url:
            raise ArtifactError(f"GetSignedArtifactURL: the service gave no URL for {name!r}")
        return Download(self._client, self._retries, StorageFailures(name)).fetched(url, to, max_bytes)

    def _store(self, url: str, zipped: IO[bytes], kind: str) -> tuple[int, str]:
        """Put the content (a zip, or one file of type `kind`) into the signed URL's block blob (Put
        Block each `block_size` bytes, then Put Block List); its size and "sha256:<hex>"."""
        prefix = uuid.uuid4().hex
        blocks: list[str] = []
        hashed = hashlib.sha256()
        size = 0
        while chunk := zipped.read(self._block):
            block = base64.b64encode(f"{prefix}{len(blocks):016d}".encode()).decode()
            self._put(url, {"comp": "block", "blockid": block}, chunk, {})
            blocks.append(block)
            hashed.update(chunk)
            size += len(chunk)
        listing = "".join(f"<Latest>{block}</Latest>" for block in blocks)
        document = f'<?xml version="1.0" encoding="utf-8"?><BlockList>{listing}</BlockList>'
        self._put(
            url,
            {"comp": "blocklist"},
            document.encode(),
            {"Content-Type": "application/xml", "x-ms-blob-content-type": kind},
        )
        return size, f"sha256:{hashed.hexdigest()}"

    def _put(self, url: str, params: dict[str, str], body: bytes, headers: dict[str, str]) -> None:
        where = str(httpx.URL(url).copy_with(query=None))

        def attempt() -> None:
            try:
                response = self._client.put(
                    httpx.URL(url).copy_merge_params(params),  # keeps the signature's query as it is
                    content=body,
                    headers={"User-Agent": AGENT, "x-ms-version": STORAGE_VERSION, **headers},
                )
            except httpx.TransportError as e:
                raise Transient(ArtifactError(f"storage {where}: no answer ({type(e).__name__})")) from None
            if response.status_code not in (200, 201):
                error = ArtifactError(f"storage {where}: {response.status_code} {response.reason_phrase}")
                raise self._retries.verdict(response, error, server_errors=True)

        self._retries.call(attempt)

    def _call(self, method: str, request: dict[str, Any], kind: type[T]) -> T:
        """A Twirp JSON call, tried again on 429 and 5xx."""
        url = str(httpx.URL(self._results).join(f"/twirp/{SERVICE}/{method}"))  # only the origin counts
        headers = {"Authorization": f"Bearer {self._token.text}", "User-Agent": AGENT}

        def attempt() -> T:
            try:
                response = self._client.post(url, json=request, headers=headers)
            except httpx.TransportError as e:
                raise Transient(ArtifactError(f"{method}: no answer ({type(e).__name__})")) from None
            if response.status_code < 300:
                try:
                    return msgspec.json.decode(response.content, type=kind, strict=False)
                except (msgspec.DecodeError, msgspec.ValidationError) as e:
                    raise ArtifactError(f"{method}: unexpected answer: {e}") from None
            try:
                problem = msgspec.json.decode(response.content, type=TwirpError)
            except (msgspec.DecodeError, msgspec.ValidationError):
                problem = TwirpError()
            if response.status_code == 409 or problem.code == "already_exists":
                raise AlreadyExists(problem.msg)
            if response.status_code == 404 and problem.code == "not_found":
                raise NotFound(problem.msg)
            detail = f": {problem.code} {problem.msg}".rstrip() if problem.code or problem.msg else ""
            error = ArtifactError(f"{method}: {response.status_code} {response.reason_phrase}{detail}")
            raise self._retries.verdict(response, error, server_errors=True)

        return self._retries.call(attempt)


class AlreadyExists(ActionError):
    """CreateArtifact met an artifact of that name in the workflow run (Twirp already_exists)."""


class NotFound(ActionError):
    """The service has no such artifact in this workflow run (Twirp not_found)."""


class StorageFailures(msgspec.Struct, frozen=True):
    """A download of the current workflow run's artifact `name` failing, as ArtifactErrors."""

    name: str

    def refused(self, answer: httpx.Response, where: str) -> Exception:
        return ArtifactError(f"storage {where}: {answer.status_code} {answer.reason_phrase}")

    def too_big(self, declared: str, most: int) -> Exception:
        return ArtifactError(f"artifact {self.name!r} is more than {most} bytes")

    def unanswered(self, where: str, error: httpx.TransportError) -> Exception:
        return ArtifactError(f"storage {where}: no answer ({type(error).__name__})")
