"""UiServer: an agent framework's own server (tests/servers/pydantic_ai_server.py, agno_agui.py)
run as a subprocess by the Python of the framework's own venv, on a free loopback port, its agent
on a scripted model that calls a tool (tests/servers/tool_model.py). The venvs are made by
`.ci/run` (`.venv-pydantic-ai`, `.venv-agno`); TEST_PYDANTIC_AI and TEST_AGNO may name other
Pythons. A missing venv fails, saying how to make it. Use with `with`."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Self

import httpx
import pytest

from tests.servers.litellm_proxy import free_port
from tests.servers.models import ModelServer
from tests.servers.tool_model import tool_model

ROOT = Path(__file__).resolve().parents[2]
READY_WITHIN = 120.0
FRAMEWORKS = {
    # name: (script, readiness path, variable naming its Python, venv, what .ci/run installs)
    "pydantic-ai": (
        "pydantic_ai_server.py",
        "/health",
        "TEST_PYDANTIC_AI",
        ".venv-pydantic-ai",
        "'pydantic-ai-slim[ag-ui,openai]==2.68.0' uvicorn",
    ),
    "agno": (
        "agno_agui.py",
        "/status",
        "TEST_AGNO",
        ".venv-agno",
        "'agno[os,a2a,openai]==3.1.10' 'ag-ui-protocol==1.0.0' uvicorn",
    ),
}


class UiServer:
    """A running framework server; `url` is its base address, `model` the scripted model it asks."""

    def __init__(self, framework: str) -> None:
        self.framework = framework
        self.script, self.ready, variable, venv, packages = FRAMEWORKS[framework]
        self.python = Path(os.environ.get(variable) or ROOT / venv / "bin" / "python")
        self.making = f"python3.11 -m venv {venv} && {venv}/bin/pip install {packages}"
        self.port = free_port()
        self.model = ModelServer(tool_model)
        self._folder = Path(tempfile.mkdtemp(prefix=f"{framework}-"))
        self._log: IO[bytes] | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        path = self._folder / "server.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def __enter__(self) -> Self:
        if not self.python.exists():
            pytest.fail(
                f"{self.framework} is not installed at {self.python}: make it as .ci/run does ({self.making})"
            )
        self.model.__enter__()
        environment = {
            **{name: value for name, value in os.environ.items() if not name.startswith("OPENAI_")},
            "AGNO_TELEMETRY": "false",
            "NO_PROXY": "127.0.0.1,localhost",
        }
        command = [
            str(self.python),
            str(ROOT / "tests" / "servers" / self.script),
            str(self.port),
            self.model.url,
        ]
        self._log = (self._folder / "server.log").open("wb")
        self._process = subprocess.Popen(
            command, cwd=self._folder, env=environment, stdout=self._log, stderr=subprocess.STDOUT
        )
        try:
            self.wait_ready()
        except BaseException:
            self.__exit__()
            raise
        return self

    def wait_ready(self) -> None:
        process, began = self._process, time.monotonic()
        assert process is not None
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while True:
                if process.poll() is not None:
                    raise RuntimeError(
                        f"{self.framework}'s server exited ({process.returncode}):\n{self.log()}"
                    )
                if time.monotonic() - began > READY_WITHIN:
                    raise RuntimeError(f"{self.framework}'s server was not ready in time:\n{self.log()}")
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(self.url + self.ready).status_code == 200:
                        return
                time.sleep(0.2)

    def __exit__(self, *exc: object) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(15)
        if self._log is not None:
            self._log.close()
            self._log = None
        self.model.__exit__()
