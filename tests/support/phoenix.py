"""Arize Phoenix's server for the tests that send it spans or read them back: started on free
ports in a folder of its own, its base URL handed over, its log shown when it does not start.

Phoenix lives in a virtual environment of its own (its dependencies are not ours): `.ci/run` makes
`.venv-phoenix` in the clone; `TEST_PHOENIX` may name another `phoenix` executable."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
PHOENIX = Path(os.environ.get("TEST_PHOENIX") or ROOT / ".venv-phoenix" / "bin" / "phoenix")


def free_port() -> int:
    with socket.socket() as one:
        one.bind(("127.0.0.1", 0))
        port: int = one.getsockname()[1]
        return port


def got(url: str) -> object:
    with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 (our own loopback server)
        return json.loads(answer.read())


@pytest.fixture
def phoenix(tmp_path: Path) -> Iterator[str]:
    """Phoenix's server, its base URL; its log is shown when it does not start."""
    if not PHOENIX.exists():
        if os.environ.get("CI") or os.environ.get("TEST_PHOENIX"):
            pytest.fail(f"Phoenix is not installed at {PHOENIX}: .ci/run installs it")
        pytest.skip(
            f"Phoenix is not installed at {PHOENIX}: make it as .ci/run does (python3.11 -m venv "
            ".venv-phoenix && .venv-phoenix/bin/pip install arize-phoenix==…)"
        )
    port = free_port()
    working = tmp_path / "phoenix"
    working.mkdir()
    environ = {
        **os.environ,
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_WORKING_DIR": str(working),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (tmp_path / "phoenix.log").open("w")
    server = subprocess.Popen([str(PHOENIX), "serve"], env=environ, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                got(f"{url}/v1/projects")
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError((tmp_path / "phoenix.log").read_text()[-3000:]) from None
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(30)
        log.close()
