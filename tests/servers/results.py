"""The Actions results service (Twirp JSON ArtifactService) and the blob storage host it signs URLs
for, as local servers with in-memory state. The storage behaves like an Azure block blob container
reached with SAS URLs: it refuses any request that carries an Authorization header."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import threading
import uuid
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, quote, urlsplit

from convy.demo.localserver import LocalServer

SERVICE = "/twirp/github.actions.results.api.v1.ArtifactService/"
FORBIDDEN = '":<>|*?\r\n\\/'
Answer = tuple[int, dict[str, str], bytes]


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Fault:
    """Answer `status` (with `headers`, `body`) to the next `times` requests whose method is
    `method` (any when empty) and whose path contains `path`."""

    status: int
    times: int = 1
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b'{"message": "injected fault"}'
    method: str = ""
    path: str = ""


class Faults:
    def __init__(self) -> None:
        self._faults: list[Fault] = []
        self._lock = threading.Lock()

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def take(self, method: str, path: str) -> Answer | None:
        with self._lock:
            for fault in self._faults:
                if fault.times > 0 and fault.method in ("", method) and fault.path in path:
                    fault.times -= 1
                    return fault.status, {"Content-Type": "application/json", **fault.headers}, fault.body
        return None


@dataclass
class Seen:
    """A request a server received."""

    method: str
    path: str
    headers: dict[str, str]


@dataclass
class Stored:
    """An artifact of the results service: pending until finalized, then listed in REST."""

    name: str
    run_backend: str
    job_backend: str
    blob: str
    version: int
    expires_at: datetime
    mime_type: str = ""
    """The type of a single file stored as it is (version 7); "" for a zip."""
    id: int = 0
    size: int = 0
    digest: str = ""
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    finalized: bool = False
    expired: bool = False


class Storage:
    """The blob host: Put Block / Put Block List / Put Blob and GET on SAS-signed URLs."""

    def __init__(self) -> None:
        self.server = LocalServer(self.route)
        self._key = secrets.token_bytes(32)
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Forget every blob, fault and request."""
        self.faults = Faults()
        self.seen: list[Seen] = []
        self.blobs: dict[str, bytes] = {}
        self.types: dict[str, str] = {}
        self._blocks: dict[str, dict[str, bytes]] = {}

    def sign(self, path: str, permissions: str, seconds: float) -> str:
        expiry = stamp(datetime.now(UTC) + timedelta(seconds=seconds))
        signature = self._signature(path, permissions, expiry)
        query = (
            f"sv=2023-11-03&se={quote(expiry, safe='')}&sr=b&sp={permissions}&sig={quote(signature, safe='')}"
        )
        return f"{self.server.url}{path}?{query}"

    def _signature(self, path: str, permissions: str, expiry: str) -> str:
        message = f"{path}\n{permissions}\n{expiry}".encode()
        return base64.b64encode(hmac.new(self._key, message, hashlib.sha256).digest()).decode()

    def route(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Answer:
        self.seen.append(Seen(method, target, headers))
        if "authorization" in headers:
            return self._error(403, "AuthenticationFailed", "Server failed to authenticate the request.")
        parts = urlsplit(target)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        wanted = "r" if method in ("GET", "HEAD") else "w"
        expiry, permissions = query.get("se", ""), query.get("sp", "")
        signature = self._signature(parts.path, permissions, expiry)
        if not hmac.compare_digest(signature, query.get("sig", "")) or wanted not in permissions:
            return self._error(403, "AuthenticationFailed", "Signature did not match.")
        if datetime.strptime(expiry, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) < datetime.now(UTC):
            return self._error(403, "AuthenticationFailed", "Signed expiry time has passed.")
        fault = self.faults.take(method, parts.path)
        if fault is not None:
            return fault
        with self._lock:
            if method in ("GET", "HEAD"):
                return self._get(parts.path)
            if method == "PUT":
                return self._put(parts.path, query, headers, body)
        return self._error(405, "UnsupportedHttpVerb", "The resource doesn't support the specified verb.")

    def _get(self, path: str) -> Answer:
        if path not in self.blobs:
            return self._error(404, "BlobNotFound", "The specified blob does not exist.")
        kind = self.types.get(path, "application/octet-stream")
        return 200, {"Content-Type": kind, "x-ms-blob-type": "BlockBlob"}, self.blobs[path]

    def _put(self, path: str, query: dict[str, str], headers: dict[str, str], body: bytes) -> Answer:
        if "content-length" not in headers:
            return self._error(411, "MissingContentLengthHeader", "Content-Length is required.")
        comp = query.get("comp", "")
        if comp == "block":
            block = query.get("blockid", "")
            try:
                decoded = base64.b64decode(block, validate=True)
            except binascii.Error:
                return self._error(400, "InvalidQueryParameterValue", "blockid is not base64.")
            staged = self._blocks.setdefault(path, {})
            if not block or len(decoded) > 64 or any(len(other) != len(block) for other in staged):
                return self._error(
                    400, "InvalidBlobOrBlock", "The specified blob or block content is invalid."
                )
            staged[block] = body
            return self._created()
        if comp == "blocklist":
            try:
                listing = ElementTree.fromstring(body)
            except ElementTree.ParseError:
                return self._error(400, "InvalidXmlDocument", "XML specified is not syntactically valid.")
            staged = self._blocks.get(path, {})
            if listing.tag != "BlockList" or any(item.text not in staged for item in listing):
                return self._error(400, "InvalidBlockList", "The specified block list is invalid.")
            self.blobs[path] = b"".join(staged[item.text or ""] for item in listing)
            self.types[path] = headers.get("x-ms-blob-content-type", "application/octet-stream")
            self._blocks.pop(path, None)
            return self._created()
        if comp:
            return self._error(400, "InvalidQueryParameterValue", "comp is not supported here.")
        if headers.get("x-ms-blob-type") != "BlockBlob":
            return self._error(400, "MissingRequiredHeader", "x-ms-blob-type is required.")
        self.blobs[path] = body
        self.types[path] = headers.get("content-type", "application/octet-stream")
        return self._created()

    def _created(self) -> Answer:
        return (
            201,
            {"ETag": f'"0x{secrets.token_hex(8).upper()}"', "x-ms-request-server-encrypted": "true"},
            b"",
        )

    def _error(self, status: int, code: str, message: str) -> Answer:
        inside = f"<Code>{code}</Code><Message>{message}</Message>"
        document = f'<?xml version="1.0" encoding="utf-8"?><Error>{inside}</Error>'
        return status, {"Content-Type": "application/xml", "x-ms-error-code": code}, document.encode()


class Results:
    """The results service's ArtifactService over Twirp JSON, checking the runtime token."""

    def __init__(self, storage: Storage, key: bytes, backends: dict[str, int]) -> None:
        self.server = LocalServer(self.route)
        self._storage = storage
        self._key = key
        self._backends = backends
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Forget every artifact, fault and request."""
        self.faults = Faults()
        self.seen: list[Seen] = []
        self.artifacts: list[Stored] = []
        self.next_id = 4000
        self.single_files = True
        """Whether single files are stored unzipped (version 7); False answers as a service that
        knows only zips."""

    def token(self, run_backend: str, job_backend: str) -> str:
        """A runtime token (HS256 JWT) whose scp grants this run and job, as the runner's."""
        scp = f"Actions.GenericRead:{uuid.UUID(int=0)} Actions.Results:{run_backend}:{job_backend}"
        header = {"typ": "JWT", "alg": "HS256"}
        payload = {
            "scp": scp,
            "exp": int(datetime.now(UTC).timestamp()) + 3600,
            "iss": "vstoken.actions.localhost",
        }
        signing = ".".join(self._b64(json.dumps(part).encode()) for part in (header, payload))
        signature = hmac.new(self._key, signing.encode(), hashlib.sha256).digest()
        return f"{signing}.{self._b64(signature)}"

    def _b64(self, data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    def _scope(self, authorization: str) -> tuple[str, str] | None:
        if not authorization.startswith("Bearer "):
            return None
        token = authorization.removeprefix("Bearer ")
        signing, _, signature = token.rpartition(".")
        expected = self._b64(hmac.new(self._key, signing.encode(), hashlib.sha256).digest())
        if not hmac.compare_digest(expected, signature):
            return None
        payload = signing.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        for scope in str(claims.get("scp", "")).split():
            fields = scope.split(":")
            if fields[0] == "Actions.Results" and len(fields) == 3:
                return fields[1], fields[2]
        return None

    def _twirp(self, status: int, code: str, message: str) -> Answer:
        return (
            status,
            {"Content-Type": "application/json"},
            json.dumps({"code": code, "msg": message}).encode(),
        )

    def _ok(self, data: dict[str, object]) -> Answer:
        return 200, {"Content-Type": "application/json"}, json.dumps(data).encode()

    def route(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Answer:
        self.seen.append(Seen(method, target, headers))
        path = urlsplit(target).path
        if method != "POST" or not path.startswith(SERVICE):
            return self._twirp(404, "bad_route", f"no handler for path {path}")
        if not headers.get("content-type", "").startswith("application/json"):
            return self._twirp(404, "bad_route", "unexpected Content-Type")
        scope = self._scope(headers.get("authorization", ""))
        if scope is None:
            return self._twirp(401, "unauthenticated", "the runtime token is missing or invalid")
        call = path.removeprefix(SERVICE)
        fault = self.faults.take(method, call)
        if fault is not None:
            return fault
        try:
            request = {self._snake(k): v for k, v in json.loads(body).items()}
        except (ValueError, AttributeError):
            return self._twirp(400, "malformed", "the body is not a JSON object")
        job = request.get("workflow_job_run_backend_id")
        writes = call in ("CreateArtifact", "FinalizeArtifact")  # DeleteArtifact: any job of the run
        if request.get("workflow_run_backend_id") != scope[0] or (writes and job != scope[1]):
            return self._twirp(403, "permission_denied", "the token does not grant this workflow job")
        if scope[0] not in self._backends:
            return self._twirp(404, "not_found", "unknown workflow run")
        with self._lock:
            match call:
                case "CreateArtifact":
                    return self._create(request)
                case "FinalizeArtifact":
                    return self._finalize(request)
                case "ListArtifacts":
                    return self._list(request)
                case "GetSignedArtifactURL":
                    return self._signed(request)
                case "DeleteArtifact":
                    return self._delete(request)
        return self._twirp(404, "bad_route", f"no method {call}")

    def _snake(self, key: str) -> str:
        return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)

    def _find(self, run: str, name: str, finalized: bool) -> Stored | None:
        return next(
            (
                a
                for a in self.artifacts
                if a.run_backend == run and a.name == name and a.finalized == finalized
            ),
            None,
        )

    def _create(self, request: dict[str, object]) -> Answer:
        name = str(request.get("name", ""))
        run = str(request["workflow_run_backend_id"])
        if not name or any(c in FORBIDDEN for c in name):
            return self._twirp(400, "invalid_argument", "invalid artifact name")
        if any(a.run_backend == run and a.name == name for a in self.artifacts):
            return self._twirp(
                409, "already_exists", "an artifact with this name already exists on the workflow run"
            )
        expires = request.get("expires_at")
        moment = (
            datetime.fromisoformat(str(expires).replace("Z", "+00:00"))
            if expires
            else datetime.now(UTC) + timedelta(days=90)
        )
        mime_type = str(request.get("mime_type") or "")
        if mime_type and not isinstance(request.get("mime_type"), str):
            return self._twirp(400, "malformed", "mime_type is a StringValue: a bare string in JSON")
        single = int(str(request.get("version", 0))) >= 7 and mime_type not in ("", "application/zip")
        if single and not self.single_files:
            return self._twirp(400, "invalid_argument", "unsupported artifact version: 7")
        ending = name.rsplit(".", 1)[-1] if single and "." in name else "zip"
        blob = f"/productionresults/actions-results/{uuid.uuid4()}/{uuid.uuid4().hex}.{ending}"
        self.artifacts.append(
            Stored(
                name=name,
                run_backend=run,
                job_backend=str(request["workflow_job_run_backend_id"]),
                blob=blob,
                version=int(str(request.get("version", 0))),
                expires_at=moment,
                mime_type=mime_type if single else "",
            )
        )
        return self._ok({"ok": True, "signed_upload_url": self._storage.sign(blob, "cw", 3600)})

    def _finalize(self, request: dict[str, object]) -> Answer:
        pending = self._find(str(request["workflow_run_backend_id"]), str(request.get("name", "")), False)
        if pending is None:
            return self._twirp(404, "not_found", "artifact not found")
        content = self._storage.blobs.get(pending.blob)
        if content is None:
            return self._twirp(412, "failed_precondition", "the artifact's blob was not uploaded")
        if int(str(request.get("size", "0"))) != len(content):
            return self._twirp(400, "invalid_argument", "size does not match the uploaded blob")
        digest = f"sha256:{hashlib.sha256(content).hexdigest()}"
        if request.get("hash") not in (None, digest):
            return self._twirp(400, "invalid_argument", "hash does not match the uploaded blob")
        self.next_id += 1
        pending.id, pending.size, pending.digest, pending.finalized = self.next_id, len(content), digest, True
        pending.created_at = datetime.now(UTC)
        return self._ok({"ok": True, "artifact_id": str(pending.id)})

    def _list(self, request: dict[str, object]) -> Answer:
        run = str(request["workflow_run_backend_id"])
        name, ident = request.get("name_filter"), request.get("id_filter")
        chosen = [
            a
            for a in self.artifacts
            if a.finalized
            and a.run_backend == run
            and (name is None or a.name == name)
            and (ident is None or str(a.id) == str(ident))
        ]
        return self._ok(
            {
                "artifacts": [
                    {
                        "workflow_run_backend_id": a.run_backend,
                        "workflow_job_run_backend_id": a.job_backend,
                        "database_id": str(a.id),
                        "name": a.name,
                        "size": str(a.size),
                        "created_at": a.created_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                        "digest": a.digest,
                    }
                    for a in chosen
                ]
            }
        )

    def _delete(self, request: dict[str, object]) -> Answer:
        """Delete the run's finalized artifact of that name (any job of the run may): its name is
        free again for CreateArtifact, and REST lists it no more."""
        found = self._find(str(request["workflow_run_backend_id"]), str(request.get("name", "")), True)
        if found is None:
            return self._twirp(404, "not_found", "artifact not found")
        self.artifacts.remove(found)
        self._storage.blobs.pop(found.blob, None)
        return self._ok({"ok": True, "artifact_id": str(found.id)})

    def _signed(self, request: dict[str, object]) -> Answer:
        found = self._find(str(request["workflow_run_backend_id"]), str(request.get("name", "")), True)
        if found is None:
            return self._twirp(404, "not_found", "artifact not found")
        return self._ok({"signed_url": self._storage.sign(found.blob, "r", 600)})
