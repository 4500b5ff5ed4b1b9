"""AgnoOs: agno's AgentOS with its A2A interface (tests/servers/agno_os.py) run as a process of its
own in agno's virtual environment (`.venv-agno`, made by `.ci/run`; `TEST_AGNO` may name another
Python), on a free loopback port, its model a ModelServer that answers `remembering`: every user
message it was given, so an answer shows what the agent remembered. Slow to start (seconds), it is
started once per test session (the `agno_os` fixture of tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Self

import httpx

from tests.servers.litellm_proxy import free_port
from tests.servers.models import ModelServer, Request

ROOT = Path(__file__).resolve().parent.parent.parent
AGNO = Path(os.environ.get("TEST_AGNO") or ROOT / ".venv-agno" / "bin" / "python")
AGENT = "shop"
"""The id of the one agent it serves (its card names it `Shoe Shop`, version 1.0.0)."""


def remembering(request: Request) -> str:
    """The model's answer: every user message it was given, in order, after `I remember: `."""
    said = [message["content"] for message in request["messages"] if message["role"] == "user"]
    return "I remember: " + " | ".join(text if isinstance(text, str) else str(text) for text in said)


class AgnoOs:
    """A running AgentOS; `url` is its base address, `model` the ModelServer it asks. Use with
    `with`; `installed()` says whether agno's Python is there."""

    def __init__(self) -> None:
        self.model = ModelServer(remembering)
        self.url = ""
        self._process: subprocess.Popen[bytes] | None = None

    @staticmethod
    def installed() -> bool:
        return AGNO.exists()

    def __enter__(self) -> Self:
        self.model.__enter__()
        port = free_port()
        script = ROOT / "tests" / "servers" / "agno_os.py"
        self._process = subprocess.Popen(
            [str(AGNO), str(script), str(port), self.model.url],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(f"{self.url}/health", timeout=5)
                return self
            except httpx.HTTPError:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    self.__exit__()
                    raise RuntimeError("agno's AgentOS did not start") from None
                time.sleep(0.3)

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(30)
            except subprocess.TimeoutExpired:
                self._process.kill()
            self._process = None
        self.model.__exit__()

    def endpoint(self) -> str:
        """The agent's JSON-RPC endpoint for whole answers (`…/v1/message:stream` streams)."""
        return f"{self.url}/a2a/agents/{AGENT}/v1/message:send"
