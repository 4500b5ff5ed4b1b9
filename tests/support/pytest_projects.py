"""What the tests of `pytest --convy` share: pytest run as a user runs it (a subprocess, the plugin
loaded from its entry point), the demo's bot and scripted models served on loopback with every
request counted, and projects written into a folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from convy.demo.localserver import LocalServer
from convy.demo.scripted import ScriptedModels
from convy.demo.supportbot import SupportBot

DEMO = Path(__file__).resolve().parents[2] / "src" / "convy" / "demo" / "project"


class Counting:
    """A route that counts the requests it serves before handing them to `route`."""

    def __init__(self, route: object) -> None:
        self.route = route
        self.count = 0
        self._lock = threading.Lock()

    def __call__(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            self.count += 1
        return self.route(method, path, headers, body)  # type: ignore[operator,no-any-return]


class Served:
    """The demo's support bot and scripted models, each counting its requests."""

    def __init__(self) -> None:
        self.bot = Counting(SupportBot())
        self.models = Counting(ScriptedModels.bundled())
        self._servers = (LocalServer(self.bot), LocalServer(self.models))

    @property
    def requests(self) -> int:
        return self.bot.count + self.models.count

    def environ(self) -> dict[str, str]:
        """The variables that point a copy of the demo project at these servers."""
        agent, models = self._servers
        return {
            "CONVY_DEMO_URL": agent.url,
            "CONVY_MODEL_URL": models.url,
            "CONVY_USER_MODEL": "scripted-user",
            "CONVY_JUDGE_MODEL": "scripted-judge",
        }

    @contextmanager
    def started(self) -> Iterator[Served]:
        for server in self._servers:
            server.start()
        try:
            yield self
        finally:
            for server in self._servers:
                server.stop()


def demo_copy(folder: Path, scenarios: bool = True) -> Path:
    """The demo project copied into `folder` (its scenario files too when `scenarios`), as a pytest
    rootdir of its own (a pytest.ini there)."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(DEMO / "agents", folder / "agents")
    shutil.copy(DEMO / "pyproject.toml", folder / "pyproject.toml")
    if scenarios:
        shutil.copytree(DEMO / "scenarios", folder / "scenarios")
    (folder / "pytest.ini").write_text(
        "[pytest]\naddopts = -p no:cacheprovider\nasyncio_default_fixture_loop_scope = function\n"
    )
    return folder


def pytest_in(
    folder: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """`python -m pytest ARGS` in `folder`, with none of this machine's convy settings."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_", "PYTEST_"))}
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=folder,
        env=environ,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def convy_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m convy ARGS` in `folder`."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_"))}
    return subprocess.run(
        [sys.executable, "-m", "convy", *args],
        cwd=folder,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def runs(results: Path) -> list[Path]:
    """The run folders under `results`, oldest first."""
    return sorted(p for p in results.glob("*/*") if p.is_dir())


def attempts(folder: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (folder / "attempts.jsonl").read_text().splitlines() if line.strip()]


def held(folder: Path) -> Counter[str]:
    """How many attempts of each scenario held in a run folder."""
    found: Counter[str] = Counter()
    for line in attempts(folder):
        decision = line["decision"]
        assert isinstance(decision, dict)
        found[str(line["scenario"])] += bool(decision.get("holds"))
    return found
