"""LiteLLMProxy: the real LiteLLM proxy (the `litellm[proxy]` test dependency) run as a subprocess on
a free loopback port, offline: no database, the model cost map read from the package (not fetched),
telemetry left at its default (off), no `.env` read (it runs in a folder of its own). It needs a
master key (KEY) since LiteLLM refuses to start without one. Its models:

* `mock` — LiteLLM's own `mock_response` (MOCK): streamed by LiteLLM in pieces of 3 characters;
  on `/v1/responses` a canned whole response (LiteLLM's mock does not stream there: asked to, it
  sends an error event).
* `scripted` (and `support-bot`, the docs' name for it), `scripted-tools`, `scripted-broken` —
  the scripted provider of
  tests/servers/litellm_scripted.py (`convy/scripted`, `convy/tools`, `convy/broken`): real chunks
  with tool-call pieces on `/v1/chat/completions`, and real Responses API events on
  `/v1/responses` (LiteLLM's bridge from chat completions), broken mid-stream on request.

Use with `with`; `started_in` is how long it took to answer its readiness check."""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Self

import httpx

KEY = "sk-convy-proxy-master-0042"
MOCK = "Your order ships tomorrow; the tracking number is 4411."
ROOT = Path(__file__).resolve().parents[2]
READY_WITHIN = 100.0
"""Seconds the proxy may take to become ready (about 8 on an idle machine)."""
LEFT_OUT = ("LITELLM_", "DATABASE_URL", "DIRECT_URL", "REDIS_", "OPENAI_", "STORE_MODEL_IN_DB")
"""Variables of the machine's that could point the proxy at a database, a cache or a provider."""


def config() -> dict[str, object]:
    scripted = {
        name: {"model_name": name, "litellm_params": {"model": f"convy/{model}"}}
        for name, model in (
            ("scripted", "scripted"),
            ("support-bot", "scripted"),
            ("scripted-tools", "tools"),
            ("scripted-broken", "broken"),
        )
    }
    mock = {
        "model_name": "mock",
        "litellm_params": {"model": "openai/gpt-4o-mini", "api_key": "sk-not-used", "mock_response": MOCK},
    }
    return {
        "model_list": [mock, *scripted.values()],
        "litellm_settings": {
            "custom_provider_map": [
                {"provider": "convy", "custom_handler": "tests.servers.litellm_scripted.scripted"}
            ]
        },
        "general_settings": {"master_key": KEY},
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class LiteLLMProxy:
    """A running LiteLLM proxy; `url` is its base address (`…/v1/chat/completions`,
    `…/v1/responses` under it), `headers` carry its master key."""

    def __init__(self) -> None:
        self.port = free_port()
        self.started_in = 0.0
        self.version = importlib.metadata.version("litellm")
        self._folder = Path(tempfile.mkdtemp(prefix="litellm-"))
        self._log: IO[bytes] | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {KEY}"}

    def log(self) -> str:
        """The end of what the proxy wrote."""
        path = self._folder / "proxy.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def __enter__(self) -> Self:
        settings = self._folder / "config.yaml"
        settings.write_text(json.dumps(config()))  # JSON is YAML
        environment = {name: value for name, value in os.environ.items() if not name.startswith(LEFT_OUT)}
        environment.update(
            LITELLM_LOCAL_MODEL_COST_MAP="True",
            PYTHONPATH=os.pathsep.join([str(ROOT), environment.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            NO_PROXY="127.0.0.1,localhost",
        )
        command = [sys.executable, "-m", "litellm.proxy.proxy_cli"]
        command += ["--config", str(settings), "--host", "127.0.0.1", "--port", str(self.port)]
        self._log = (self._folder / "proxy.log").open("wb")
        began = time.monotonic()
        self._process = subprocess.Popen(
            command, cwd=self._folder, env=environment, stdout=self._log, stderr=subprocess.STDOUT
        )
        try:
            self.wait_ready(began)
        except BaseException:
            self.__exit__()
            raise
        self.started_in = time.monotonic() - began
        return self

    def wait_ready(self, began: float) -> None:
        process = self._process
        assert process is not None
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"the LiteLLM proxy exited ({process.returncode}):\n{self.log()}")
                if time.monotonic() - began > READY_WITHIN:
                    raise RuntimeError(
                        f"the LiteLLM proxy was not ready in {READY_WITHIN:.0f} s:\n{self.log()}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(f"{self.url}/health/readiness").status_code == 200:
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
        shutil.rmtree(self._folder, ignore_errors=True)
