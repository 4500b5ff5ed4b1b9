"""The benchmark's latency servers: an OpenAI-compatible model server (the simulated user and the
judge) and an OpenAI-compatible agent server, each answering every request a fixed latency after it
arrived, counting requests, connections and the peak number in flight.

They run in a process of their own (`python benchmarks/servers.py --latency 0.1`), which prints one
JSON line with both base URLs, serves until its standard input closes, and answers `GET /stats` (on
either port) with the counts of both. HTTP/1.1 with keep-alive on asyncio streams, standard library
only (plus msgspec for JSON), so the servers add about a millisecond at most to the latency asked for.

The model server answers a request with `response_format` `json_schema` or `json_object` as the
judge: one decision per claim, the count read from the judge's request (`Claims (N):`), a graded
claim given its first passing grade. Any other request is the simulated user: plain text, never
FINISHED, so every attempt plays max_turns turns, each message numbered by the request (every
transcript differs, so no verdict is reused and every attempt is judged). Prompt tokens are
estimated from the messages' lengths (4 characters a token, plus 4 a message) and reported in
`usage`.

The benchmark's side of them is at the end: LatencyServers, this process as the benchmark starts,
asks and stops it, and Certificates, the CA and the server certificate of the HTTPS workload."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import msgspec

CLAIMS = re.compile(rb"Claims \((\d+)\):\n(.*?)\n\nTranscript", re.S)
GRADES = re.compile(r'"([^"]*)" = (true|false)')
WORDS = (
    "I ordered the blue headphones three weeks ago and they still have not arrived, the tracking page "
    "has said 'in transit' since the ninth and nobody answers the phone at the depot."
)
ANSWER = (
    "Thank you for your patience. I have looked up the order and can see that the parcel left our "
    "warehouse on time but was held at the regional depot. I can either send a replacement today "
    "with express delivery, or refund the full amount to your original payment method within five "
    "working days. Which would you prefer?"
)


class Counts:
    """What one server saw: requests by kind, connections, in flight now and at most, when each
    request arrived (seconds since the process started), how long each took beyond the latency."""

    def __init__(self) -> None:
        self.requests = 0
        self.kinds: dict[str, int] = {}
        self.prompt_tokens: dict[str, int] = {}
        self.connections = 0
        self.in_flight = 0
        self.peak = 0
        self.arrivals: list[float] = []
        self.late: list[float] = []
        self.body_waits: list[float] = []
        self.bad = 0
        self.handshakes = 0

    def view(self) -> dict[str, object]:
        late = sorted(self.late)
        return {
            "requests": self.requests,
            "kinds": self.kinds,
            "prompt_tokens": self.prompt_tokens,
            "connections": self.connections,
            "handshakes": self.handshakes,
            "peak_in_flight": self.peak,
            "arrivals": self.arrivals,
            "late_ms": {
                "p50": 1000 * late[len(late) // 2] if late else None,
                "p99": 1000 * late[int(len(late) * 0.99)] if late else None,
                "max": 1000 * late[-1] if late else None,
            },
            "body_wait_ms": {
                "p50": 1000 * sorted(self.body_waits)[len(self.body_waits) // 2] if self.body_waits else None,
                "max": 1000 * max(self.body_waits) if self.body_waits else None,
            },
            "bad": self.bad,
        }


class Tokens:
    """The prompt tokens of a request's messages, estimated as OpenAI-like tokenizers come out on
    English: a token per 4 characters, and 4 for each message's framing."""

    def __init__(self, messages: list[dict[str, object]]) -> None:
        self._messages = messages

    def count(self) -> int:
        return sum(4 + (len(str(m.get("content", ""))) + 3) // 4 for m in self._messages)


class Completion:
    """A chat completion's body, with its text and token usage."""

    def __init__(self, model: str, text: str, prompt: int) -> None:
        self._model = model
        self._text = text
        self._prompt = prompt

    def body(self) -> bytes:
        completion = (len(self._text) + 3) // 4
        return msgspec.json.encode(
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion",
                "model": self._model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self._text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": self._prompt,
                    "completion_tokens": completion,
                    "total_tokens": self._prompt + completion,
                },
            }
        )


class JudgeRequest:
    """The judge's request as the model server reads it: its claims, graded ones with their grades."""

    def __init__(self, content: bytes) -> None:
        self._content = content

    def decisions(self) -> list[dict[str, object]]:
        found = CLAIMS.search(self._content)
        if found is None:
            raise ValueError("no `Claims (N):` in the judge's request")
        count = int(found.group(1))
        items: list[list[str]] = []
        for line in found.group(2).decode().split("\n"):
            if line.startswith("   Grades (grade = pass): ") and items:
                items[-1].append(line)
            elif line[:1].isdigit():
                items.append([line])
            elif items:
                items[-1][0] += "\n" + line
        decisions: list[dict[str, object]] = []
        for item in items:
            decision: dict[str, object] = {"pass": True, "reason": "The transcript shows it."}
            if len(item) > 1:
                grades = [(grade, passes == "true") for grade, passes in GRADES.findall(item[1])]
                decision["grade"] = next(g for g, passes in grades if passes)
            decisions.append(decision)
        if len(decisions) != count:
            raise ValueError(f"read {len(decisions)} claims of {count}")
        return decisions


class Server:
    """One HTTP/1.1 server on loopback: `kind` is "models" or "agent"; each POST is answered
    `latency` seconds after its request was read in full."""

    def __init__(
        self, kind: str, latency: float, counts: Counts, report: Report, tls: ssl.SSLContext | None = None
    ) -> None:
        self.kind = kind
        self._latency = latency
        self._counts = counts
        self._report = report
        self._tls = tls
        self._server: asyncio.Server | None = None
        self.open: set[asyncio.StreamWriter] = set()

    async def start(self) -> str:
        self._server = await asyncio.start_server(self.serve, "127.0.0.1", 0, backlog=1024, ssl=self._tls)
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"{'https' if self._tls else 'http'}://{host}:{port}"

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._counts.connections += 1
        if writer.get_extra_info("ssl_object") is not None:
            # asyncio hands over a TLS connection only once its handshake is done: one full handshake
            self._counts.handshakes += 1
        self.open.add(writer)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                headed = time.monotonic()
                line, _, rest = head.partition(b"\r\n")
                method, path, _ = line.split(b" ", 2)
                length, close = 0, False
                for header in rest.split(b"\r\n"):
                    name, _, value = header.partition(b":")
                    name = name.strip().lower()
                    if name == b"content-length":
                        length = int(value)
                    elif name == b"connection" and value.strip().lower() == b"close":
                        close = True
                body = await reader.readexactly(length) if length else b""
                arrived = time.monotonic()
                if method == b"POST":
                    self._counts.body_waits.append(arrived - headed)
                if method == b"GET" and path == b"/stats":
                    status, payload = 200, msgspec.json.encode(self._report.view())
                elif method == b"POST" and path.startswith(b"/reset"):
                    self._report.reset(msgspec.json.decode(body or b"{}").get("pid", 0))
                    status, payload = 200, b"{}"
                elif method == b"POST":
                    status, payload = await self.answered(body, arrived)
                else:
                    status, payload = 404, b'{"error": {"message": "not found"}}'
                writer.write(
                    b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                    % (status, b"OK" if status == 200 else b"Error", len(payload), payload)
                )
                if method == b"POST" and not path.startswith(b"/reset"):
                    self._counts.in_flight -= 1
                    self._counts.late.append(time.monotonic() - arrived - self._latency)
                if close:
                    return
        finally:
            self.open.discard(writer)
            writer.close()

    async def stop(self) -> None:
        """Stop listening and end every connection, so each handler returns on its own."""
        if self._server is not None:
            self._server.close()
        for writer in list(self.open):
            writer.close()
        for _ in range(100):
            if not self.open:
                return
            await asyncio.sleep(0.01)

    async def answered(self, body: bytes, arrived: float) -> tuple[int, bytes]:
        counts = self._counts
        self._report.arrived()
        counts.requests += 1
        counts.in_flight += 1
        counts.peak = max(counts.peak, counts.in_flight)
        counts.arrivals.append(arrived - self._report.started)
        try:
            request = msgspec.json.decode(body)
            kind, completion = self.completion(request)
        except (ValueError, KeyError, TypeError, StopIteration, msgspec.DecodeError) as error:
            counts.bad += 1
            kind, status, payload = "bad", 400, msgspec.json.encode({"error": {"message": str(error)}})
        else:
            status, payload = 200, completion.body()
            counts.prompt_tokens[kind] = (
                counts.prompt_tokens.get(kind, 0) + Tokens(request["messages"]).count()
            )
        counts.kinds[kind] = counts.kinds.get(kind, 0) + 1
        if self._latency > 0:
            await asyncio.sleep(self._latency - (time.monotonic() - arrived))
        return status, payload

    def completion(self, request: dict[str, object]) -> tuple[str, Completion]:
        messages = request["messages"]
        if not isinstance(messages, list):
            raise TypeError("messages is not a list")
        model = str(request.get("model", "bench"))
        prompt = Tokens(messages).count()
        if self.kind == "agent":
            turn = sum(1 for m in messages if m.get("role") == "user")
            return "agent", Completion(model, f"({turn}) {ANSWER}", prompt)
        response_format = request.get("response_format")
        judged = ("json_object", "json_schema")
        if isinstance(response_format, dict) and response_format.get("type") in judged:
            content = str(messages[-1]["content"]).encode()
            decisions = JudgeRequest(content).decisions()
            return "judge", Completion(model, msgspec.json.encode({"decisions": decisions}).decode(), prompt)
        turn = (len(messages) - 1) // 2 + 1
        serial = self._counts.requests
        return "user", Completion(model, f"Message {turn} (#{serial}): {WORDS}", prompt)


class Report:
    """The counts of both servers, and the moment the process started (arrivals count from it).
    When a reset names the process that will send the requests (`pid`), the CPU seconds it had
    spent when its first request arrived are kept (`client_cpu_before_first`): its start-up."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.servers: dict[str, Counts] = {"models": Counts(), "agent": Counts()}
        self.pid = 0
        self.before_first: float | None = None

    def reset(self, pid: int = 0) -> None:
        for counts in self.servers.values():
            counts.__init__()
        self.started = time.monotonic()
        self.pid = pid
        self.before_first = None

    def arrived(self) -> None:
        """A request arrived: the first one since the reset reads its sender's CPU time so far."""
        if self.pid and self.before_first is None:
            self.before_first = ClientCpu(self.pid).seconds()

    def view(self) -> dict[str, object]:
        return {
            "cpu_seconds": time.process_time(),
            "started": self.started,
            "client_cpu_before_first": self.before_first,
            **{name: counts.view() for name, counts in self.servers.items()},
        }


class ClientCpu:
    """The CPU seconds (user + system) a process has spent so far, from /proc (Linux)."""

    TICKS = os.sysconf("SC_CLK_TCK")

    def __init__(self, pid: int) -> None:
        self._pid = pid

    def seconds(self) -> float | None:
        try:
            with open(f"/proc/{self._pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / self.TICKS


class Servers:
    """Both servers in this process, until standard input closes."""

    def __init__(self, latency: float, tls: ssl.SSLContext | None = None) -> None:
        self._latency = latency
        self._tls = tls

    async def serve(self) -> None:
        report = Report()
        urls: dict[str, str] = {}
        servers: list[Server] = []
        for kind in ("models", "agent"):
            servers.append(Server(kind, self._latency, report.servers[kind], report, self._tls))
            urls[kind] = await servers[-1].start()
        sys.stdout.write(json.dumps(urls) + "\n")
        sys.stdout.flush()
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)
        for server in servers:
            await server.stop()


class Certificates:
    """A certificate authority of the benchmark's own and a server certificate for 127.0.0.1 it
    signed, made with the openssl command in `folder`; `ca` is what clients trust (SSL_CERT_FILE)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.ca = folder / "ca.pem"
        self.cert = folder / "server.pem"
        self.key = folder / "server.key"

    def made(self) -> Certificates:
        if shutil.which("openssl") is None:
            raise RuntimeError("the https workloads need the openssl command")
        self.folder.mkdir(parents=True, exist_ok=True)
        key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        self.openssl(
            "req",
            "-x509",
            *key,
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=convy benchmark CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        )
        self.openssl("req", *key, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
        (self.folder / "server.ext").write_text(
            "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n"
            "keyUsage=critical,digitalSignature,keyEncipherment\n"
        )
        self.openssl(
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        )
        return self

    def openssl(self, *arguments: str) -> None:
        subprocess.run(["openssl", *arguments], cwd=self.folder, check=True, capture_output=True)

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))


class LatencyServers:
    """benchmarks/servers.py in its own process, answering after `latency` seconds (over HTTPS with
    `tls`'s server certificate when given)."""

    def __init__(self, latency: float, tls: Certificates | None = None) -> None:
        self.latency = latency
        self.tls = tls
        self._process: subprocess.Popen[bytes] | None = None
        self.urls: dict[str, str] = {}

    def __enter__(self) -> LatencyServers:
        tls = ["--tls", str(self.tls.cert), str(self.tls.key)] if self.tls else []
        self._process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--latency", str(self.latency), *tls],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self._process.stdout is not None
        self.urls = json.loads(self._process.stdout.readline())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def stats(self) -> dict[str, Any]:
        context = self.tls.context() if self.tls else None
        with urllib.request.urlopen(self.urls["models"] + "/stats", timeout=10, context=context) as response:
            return json.loads(response.read())

    def reset(self, pid: int = 0) -> None:
        """Start counting afresh; `pid` is the process whose CPU time at its first request is kept."""
        body = json.dumps({"pid": pid}).encode()
        request = urllib.request.Request(self.urls["models"] + "/reset", data=body, method="POST")
        with urllib.request.urlopen(request, timeout=10, context=self.tls.context() if self.tls else None):
            pass


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="the benchmark's latency servers")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds before each answer")
    parser.add_argument(
        "--tls", nargs=2, metavar=("CERT", "KEY"), help="serve HTTPS with this certificate and its key"
    )
    arguments = parser.parse_args()
    context: ssl.SSLContext | None = None
    if arguments.tls:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(*arguments.tls)
    asyncio.run(Servers(arguments.latency, context).serve())
