"""Agent frameworks' own servers, started for the tests from virtual environments of their own
(`.ci/run` makes them; their dependencies are not ours), with the scripted model below:

* LangGraph's (`langgraph dev`, from `.venv-langgraph`, or TEST_LANGGRAPH naming the executable)
  serving tests/servers/langgraph_app: a ReAct graph `agent` with the tool `order_status`;
* Google ADK's (`adk api_server`, from `.venv-adk`, or TEST_ADK) serving tests/servers/adk_apps:
  the app `orders` with the same tool, its model through LiteLLM.

Each serves a copy of its folder in the test session's temporary folder, where it keeps its state.

The model (`order_model`) calls `order_status` for order 4411 on the first request of each turn and,
given the tool's result, answers `Order 4411 is on its way. You first said: <the conversation's
first user message> (<N> user messages)` — so a server that forgets the dialogue answers wrongly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.servers.litellm_proxy import free_port
from tests.servers.models import Called, said

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
LANGGRAPH = Path(os.environ.get("TEST_LANGGRAPH") or ROOT / ".venv-langgraph" / "bin" / "langgraph")
ADK = Path(os.environ.get("TEST_ADK") or ROOT / ".venv-adk" / "bin" / "adk")
TOOL_TEXT = "status: shipped on Monday"


def order_model(request: dict[str, Any]) -> str | Called:
    """The scripted model: a tool call first, then an answer that shows what it remembers."""
    messages = request["messages"]
    users = [said(message) for message in messages if message.get("role") == "user"]
    if messages[-1].get("role") != "tool":
        return Called("order_status", json.dumps({"order": "4411"}), id=f"call-{len(users)}")
    return f"Order 4411 is on its way. You first said: {users[0]} ({len(users)} user messages)"


def missing(executable: Path, venv: str, packages: str) -> str:
    return (
        f"{executable} is not installed: make it as .ci/run does (python3.11 -m venv {venv} && "
        f"{venv}/bin/pip install {packages})"
    )


@contextmanager
def served(
    command: list[str], url: str, ready: str, cwd: Path, environ: dict[str, str], log: Path
) -> Iterator[str]:
    """The server `command` started in `cwd`, once `url + ready` answers; its log shown if it never does."""
    with log.open("w") as out:
        server = subprocess.Popen(
            command, cwd=cwd, env={**os.environ, **environ}, stdout=out, stderr=subprocess.STDOUT
        )
        try:
            deadline = time.monotonic() + 180
            while True:
                try:
                    with urllib.request.urlopen(url + ready, timeout=10):  # noqa: S310 (loopback)
                        break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise AssertionError(log.read_text()[-4000:]) from None
                    time.sleep(0.5)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(30)


@contextmanager
def langgraph_server(model_url: str, folder: Path) -> Iterator[str]:
    """`langgraph dev` on a free port, its graph's model at `model_url`; its base URL."""
    if not LANGGRAPH.exists():
        raise AssertionError(missing(LANGGRAPH, ".venv-langgraph", "'langgraph-cli[inmem]' langchain-openai"))
    port = free_port()
    command = [
        str(LANGGRAPH),
        "dev",
        "--no-browser",
        "--no-reload",
        "--port",
        str(port),
        "--host",
        "127.0.0.1",
    ]
    environ = {"MODEL_URL": model_url, "LANGGRAPH_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false"}
    url = f"http://127.0.0.1:{port}"
    app = shutil.copytree(HERE / "langgraph_app", folder / "langgraph_app")  # its state is kept there
    with served(command, url, "/ok", app, environ, folder / "langgraph.log") as base:
        yield base


@contextmanager
def adk_server(model_url: str, folder: Path) -> Iterator[str]:
    """`adk api_server` on a free port serving tests/servers/adk_apps; its base URL."""
    if not ADK.exists():
        raise AssertionError(missing(ADK, ".venv-adk", "google-adk litellm"))
    port = free_port()
    apps = shutil.copytree(HERE / "adk_apps", folder / "adk_apps")  # its sessions are kept there
    command = [str(ADK), "api_server", "--host", "127.0.0.1", "--port", str(port), str(apps)]
    environ = {"MODEL_URL": model_url, "ADK_DISABLE_TELEMETRY": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    url = f"http://127.0.0.1:{port}"
    with served(command, url, "/list-apps", folder, environ, folder / "adk.log") as base:
        yield base
