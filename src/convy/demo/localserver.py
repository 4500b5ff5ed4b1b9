"""A small JSON-over-HTTP server on a free loopback port, in a thread of its own: how the demo
agent, the scripted models and the tests' servers are served."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

# A route answers (method, path, headers, body bytes) with (status, headers, body bytes).
Route = Callable[[str, str, dict[str, str], bytes], tuple[int, dict[str, str], bytes]]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        status, headers, payload = self.server.route(
            self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
        )
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Stay quiet: the library never prints."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128
    """Connections waiting to be accepted: socketserver's 5 drops some when 64 conversations start at
    once, and the agent's failures now fail the gate (max-failed)."""

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hung up mid-answer is no concern of the server's; stay quiet."""

    def __init__(self, route: Route) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.route = route


class LocalServer:
    """A running server for `route`; `url` is its base address. Use with `with`, or start()/stop()."""

    def __init__(self, route: Route) -> None:
        self._route = route
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the server is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        self._server = _Server(self._route)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class JsonReply:
    """A JSON answer as a route returns it."""

    def __init__(self, data: object, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self._data = data
        self._status = status
        self._headers = headers or {}

    def triple(self) -> tuple[int, dict[str, str], bytes]:
        return (
            self._status,
            {"Content-Type": "application/json", **self._headers},
            json.dumps(self._data).encode(),
        )
