"""AgentServer: a local HTTP agent that misbehaves on request. Each path is named for what it does:

* `/ok` — an OpenAI-compatible echo (`choices.0.message.content` is `echo: <latest user message>`),
  with `usage` (prompt_tokens: characters of all messages, completion_tokens: of the reply) and a
  `trace` of steps of every kind; `/no-usage` the same without usage, `/half-usage` with
  prompt_tokens only.
* `/custom` — a body of its own shape: `{"input", "session", "history"}` in,
  `{"data": {"outputs": [{"text"}]}, "stats": {"in", "out"}, "trace"}` out.
* `/retry-after/<seconds>` — the first request of each conversation (the body's `session`) is
  refused with 429 and `Retry-After: <seconds>`, later ones are answered as `/ok`;
  `/retry-after-date` the same with 503 and an HTTP date 30 s ahead.
* `/status/<code>` — that status, with a JSON error body.
* `/litellm-429/<seconds>` — as `/retry-after/<seconds>`, but the wait is only in
  `llm_provider-retry-after` (LiteLLM's router) and the message in `error.message`.
* `/litellm-400` — HTTP 400 as LiteLLM's proxy answers an OpenAI-shaped body without `model`, with
  its message at `error.message`.
* `/slow` — answers after `slow` seconds (or when the server stops).
* `/jitter` — as `/ok`, after a random wait of up to 40 ms (so a signal can land mid-turn).
* `/not-json`, `/no-answer` (no choices), `/object-answer`, `/number-answer` — answers convy cannot
  read, or reads as a number.
* `/echo-headers` — HTTP 500 whose error message is every request header (as a careless agent's
  error page might show them); `/agui-echo-headers` and `/vercel-echo-headers` the same said by a
  streamed error event (AG-UI's RUN_ERROR, the Vercel AI UI message stream's `error` part).
* `/huge` — a 10 MB answer; `/huge-gzip` 10 MB gzip-encoded (about 7.5 MB sent), so its size is
  only known by reading it. Both are made once per server.

Every request is recorded as Seen: its path, headers, JSON body, the conversation (`session`) and
the connection it came on (each connection is served by a thread of its own). `seen` counts every
latest user message that arrived; `processed` those the agent acted on (answered with 2xx).

TlsFront puts HTTPS (with a client certificate, if asked) in front of such a server."""

from __future__ import annotations

import base64
import contextlib
import email.utils
import gzip
import json
import random
import socket
import ssl
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Self

from convy.demo.localserver import LocalServer

Triple = tuple[int, dict[str, str], bytes]
JSON = {"Content-Type": "application/json"}
SSE = {"Content-Type": "text/event-stream"}
STREAMED_ERRORS = {
    "/agui-echo-headers": lambda said: {"type": "RUN_ERROR", "message": said},
    "/vercel-echo-headers": lambda said: {"type": "error", "errorText": said},
}
"""Streams whose error event (AG-UI's RUN_ERROR, the UI message stream's `error` part) says every
request header."""
TRACE: list[object] = [
    "I should look the order up.",
    {"name": "lookup", "arguments": {"order": 4411}, "result": {"status": "lost"}},
    {"tool": "refund", "input": "4411", "output": "ok"},
    {"type": "function", "function": {"name": "notify", "arguments": '{"to": "dana"}'}, "result": None},
    {"thought": "All done."},
    42,
]


@dataclass(frozen=True)
class Seen:
    """One request as the agent received it."""

    path: str
    headers: dict[str, str]
    body: Any
    session: str
    connection: str
    status: int = 0


@dataclass
class AgentServer:
    """A running misbehaving agent; `url` is its base address. Use with `with`."""

    slow: float = 5.0
    requests: list[Seen] = field(default_factory=list)
    seen: Counter[str] = field(default_factory=Counter)
    processed: Counter[str] = field(default_factory=Counter)
    numbered: int = 0
    """Answers of `/numbered` so far: each is numbered, so no two transcripts are the same."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._refused: set[str] = set()
        self._stopping = threading.Event()
        self._server = LocalServer(self.route)

    @property
    def url(self) -> str:
        return self._server.url

    def __enter__(self) -> Self:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._server.stop()

    def connections(self, session: str) -> set[str]:
        """The connections the requests of conversation `session` came on."""
        with self._lock:
            return {seen.connection for seen in self.requests if seen.session == session}

    def route(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Triple:
        try:
            request = json.loads(body) if body else None
        except ValueError:
            request = None
        session = str(request.get("session", "")) if isinstance(request, dict) else ""
        latest = self.latest(request)
        with self._lock:
            self.seen[latest] += 1
        if path.split("?")[0] == "/echo-headers":
            echoed = json.dumps({"error": {"message": repr(headers)}}).encode()
            status, answer_headers, payload = 500, JSON, echoed
        elif path.split("?")[0] in STREAMED_ERRORS:
            event = STREAMED_ERRORS[path.split("?")[0]](repr(headers))
            status, answer_headers, payload = 200, SSE, f"data: {json.dumps(event)}\n\n".encode()
        else:
            status, answer_headers, payload = self.answer(path.split("?")[0], request, session, latest)
        with self._lock:
            self.requests.append(
                Seen(path, headers, request, session, threading.current_thread().name, status)
            )
            if 200 <= status < 300:
                self.processed[latest] += 1
        return status, answer_headers, payload

    def latest(self, request: Any) -> str:
        """The latest user message of a request: `input`, else the last user message."""
        if not isinstance(request, dict):
            return ""
        if isinstance(request.get("input"), str):
            return request["input"]
        said = [m.get("content", "") for m in request.get("messages") or [] if m.get("role") == "user"]
        return str(said[-1]) if said else ""

    def answer(self, path: str, request: Any, session: str, latest: str) -> Triple:
        parts = path.strip("/").split("/")
        match parts:
            case ["ok"]:
                return self.completion(request, f"echo: {latest}", usage="full")
            case ["no-usage"]:
                return self.completion(request, f"echo: {latest}", usage="none")
            case ["half-usage"]:
                return self.completion(request, f"echo: {latest}", usage="half")
            case ["custom"]:
                return self.custom(latest)
            case ["retry-after", seconds]:
                if self.first(session):
                    return 429, {**JSON, "Retry-After": seconds}, b'{"error": "slow down"}'
                return self.completion(request, f"echo: {latest}", usage="full")
            case ["retry-after-date"]:
                if self.first(session):
                    when = email.utils.formatdate(time.time() + 30, usegmt=True)
                    return 503, {**JSON, "Retry-After": when}, b'{"error": "overloaded"}'
                return self.completion(request, f"echo: {latest}", usage="full")
            case ["status", code]:
                return int(code), JSON, json.dumps({"error": f"status {code}"}).encode()
            case ["numbered"]:
                with self._lock:
                    self.numbered += 1
                    number = self.numbered
                return self.completion(request, f"echo {number}: {latest}", usage="full")
            case ["jitter"]:
                self._stopping.wait(random.uniform(0.0, 0.04))
                return self.completion(request, f"echo: {latest}", usage="full")
            case ["litellm-429", seconds]:
                if self.first(session):
                    said = {
                        "error": {"message": "No deployments available for selected model", "code": "429"}
                    }
                    return 429, {**JSON, "llm_provider-retry-after": seconds}, json.dumps(said).encode()
                return self.completion(request, f"echo: {latest}", usage="full")
            case ["litellm-400"]:
                said = "Invalid model name passed in model=None. Call `/v1/models` to view available models."
                body = {"error": {"message": said, "type": "None", "param": None, "code": "400"}}
                return 400, JSON, json.dumps(body).encode()
            case ["slow"]:
                self._stopping.wait(self.slow)
                return self.completion(request, f"echo: {latest}", usage="full")
            case ["not-json"]:
                return 200, {"Content-Type": "text/html"}, b"<html><body>Bad gateway</body></html>"
            case ["no-answer"]:
                return 200, JSON, json.dumps({"choices": [], "usage": {"prompt_tokens": 3}}).encode()
            case ["object-answer"]:
                return self.completion(request, {"text": "hi"}, usage="none")
            case ["number-answer"]:
                return self.completion(request, 42, usage="none")
            case ["huge"]:
                return 200, JSON, self.huge
            case ["huge-gzip"]:
                return 200, {**JSON, "Content-Encoding": "gzip"}, self.huge_gzip
            case _:
                return 404, JSON, json.dumps({"error": f"no route {path}"}).encode()

    @cached_property
    def huge(self) -> bytes:
        """A 10 MB answer, made once (so a test can measure what the client alone holds)."""
        return self.completion(None, "x" * 10_000_000, usage="none")[2]

    @cached_property
    def huge_gzip(self) -> bytes:
        """A 10 MB answer of text that barely compresses, gzip-encoded, made once."""
        noise = base64.b64encode(random.randbytes(7_500_000)).decode()
        return gzip.compress(self.completion(None, noise, usage="none")[2], 1)

    def first(self, session: str) -> bool:
        """Whether this is the first request of conversation `session` (and remember it)."""
        with self._lock:
            if session in self._refused:
                return False
            self._refused.add(session)
            return True

    def completion(self, request: Any, content: object, usage: str) -> Triple:
        messages = request.get("messages") if isinstance(request, dict) else None
        prompt = sum(len(m.get("content", "")) for m in messages or [])
        answer: dict[str, object] = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
            "trace": TRACE,
        }
        if usage == "full":
            answer["usage"] = {"prompt_tokens": prompt, "completion_tokens": len(str(content))}
        elif usage == "half":
            answer["usage"] = {"prompt_tokens": prompt}
        return 200, JSON, json.dumps(answer).encode()

    def custom(self, latest: str) -> Triple:
        text = f"custom: {latest}"
        answer = {
            "data": {"outputs": [{"text": text}]},
            "stats": {"in": len(latest), "out": len(text)},
            "trace": [{"tool": "search", "input": {"q": latest}, "output": ["a", "b"]}],
        }
        return 200, JSON, json.dumps(answer).encode()


class TlsFront:
    """HTTPS in front of a plain local server: TLS on a loopback port of its own with the server
    certificate `cert`/`key`, asking for a client certificate signed by `client_ca` when given;
    each connection it accepts is relayed to one connection to `backend` (its `url`). `url` is the
    HTTPS address. Use with `with`."""

    def __init__(self, backend: str, cert: str, key: str, client_ca: str | None = None) -> None:
        host, port = backend.removeprefix("http://").split(":")
        self._backend = (host, int(port))
        self._context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._context.load_cert_chain(cert, key)
        if client_ca is not None:
            self._context.load_verify_locations(cafile=client_ca)
            self._context.verify_mode = ssl.CERT_REQUIRED
        self._listener = socket.socket()
        self._open: list[socket.socket] = []
        self.handshakes = 0
        """TLS handshakes completed: one for each connection a client opened."""

    @property
    def url(self) -> str:
        host, port = self._listener.getsockname()[:2]
        return f"https://{host}:{port}"

    def __enter__(self) -> Self:
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen()
        threading.Thread(target=self.accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        for opened in [self._listener, *self._open]:
            with contextlib.suppress(OSError):
                opened.shutdown(socket.SHUT_RDWR)
            opened.close()

    def accept(self) -> None:
        while True:
            try:
                raw, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self.relay, args=(raw,), daemon=True).start()

    def relay(self, raw: socket.socket) -> None:
        try:
            secure = self._context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            raw.close()
            return
        self.handshakes += 1
        backend = socket.create_connection(self._backend)
        self._open += [secure, backend]
        threading.Thread(target=self.pump, args=(backend, secure), daemon=True).start()
        self.pump(secure, backend)

    def pump(self, source: socket.socket, target: socket.socket) -> None:
        """Copies `source` to `target` until either closes, then closes both."""
        try:
            while chunk := source.recv(65536):
                target.sendall(chunk)
        except OSError:
            pass
        finally:
            source.close()
            target.close()
