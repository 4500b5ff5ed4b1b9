"""Served: an ASGI app served by uvicorn on a free loopback port, in a thread of its own — the
agents and servers of the tests written with Starlette or a2a-sdk run through it."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Awaitable, Callable

import uvicorn
from starlette.types import Receive, Scope, Send

App = Callable[[Scope, Receive, Send], Awaitable[None]]


class Served:
    """`app` served on 127.0.0.1 from `start()` to `stop()`; `url` is its base address once started.
    With `lifespan` the app's startup and shutdown are run (a framework's app that starts workers)."""

    def __init__(self, app: App, lifespan: bool = False) -> None:
        self._socket = socket.socket()
        config = uvicorn.Config(
            app,
            lifespan="on" if lifespan else "off",
            log_config=None,
            log_level="critical",
            access_log=False,
            ws="none",
            http="h11",
            loop="asyncio",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self.url = ""
        """The base address, once started."""

    def start(self) -> None:
        self._socket.bind(("127.0.0.1", 0))
        host, port = self._socket.getsockname()[:2]
        self.url = f"http://{host}:{port}"
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the local ASGI server did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._socket.close()
