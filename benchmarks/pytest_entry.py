"""`pytest --convy` next to `convy run` on the same fakes, in one run: a project of 20 scenarios
(the demo's four, five times over under new names) played 3 times each against the demo's support
bot and scripted models, each a real HTTP server on loopback answering after `--latency` seconds.
Each command is started as a user starts it (a fresh process, start-up included, its compiled
modules cached after a first round that is not counted), in turns, and the medians of their wall
times are compared.

    python benchmarks/pytest_entry.py [--rounds 3] [--latency 0.1]

Goal: pytest's median at most 1.1 × convy run's (a runner that played each test on its own would
take about 20 ×). Exit 1 when it is more."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from convy.demo.localserver import LocalServer
from convy.demo.scripted import ScriptedModels
from convy.demo.servers import DemoServers
from convy.demo.supportbot import SupportBot

GOAL = 1.1
COPIES = 5


class Slow:
    """A route answering after `latency` seconds, as a deployed service would."""

    def __init__(self, route: object, latency: float) -> None:
        self._route = route
        self._latency = latency

    def __call__(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        time.sleep(self._latency)
        return self._route(method, path, headers, body)  # type: ignore[operator,no-any-return]


class Bench:
    """The project in `folder` and the environment that points it at the servers."""

    def __init__(self, folder: Path, environ: dict[str, str]) -> None:
        self.folder = folder
        self.environ = environ

    @classmethod
    def made(cls, folder: Path, agent: str, models: str) -> Bench:
        demo = DemoServers().project
        shutil.copytree(demo / "agents", folder / "agents")
        (folder / "scenarios").mkdir()
        for copy in range(COPIES):
            for path in sorted((demo / "scenarios").glob("*.yaml")):
                text = path.read_text().replace(f"name: {path.stem}", f"name: {path.stem}-{copy}")
                (folder / "scenarios" / f"{path.stem}-{copy}.yaml").write_text(text)
        (folder / "pyproject.toml").write_text(
            '[tool.convy]\nrepeat = 3\nlabels = "none"\n\n'
            '[tool.pytest.ini_options]\naddopts = "-p no:cacheprovider"\n'
            'asyncio_default_fixture_loop_scope = "function"\n'
        )
        environ = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CONVY_", "INPUT_", "PYTEST_")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        # compiled modules cached (as an installed package has them; pytest's rewritten plugins too)
        environ["PYTHONPYCACHEPREFIX"] = str(folder / ".pycache")
        environ.update(
            {
                "CONVY_DEMO_URL": agent,
                "CONVY_MODEL_URL": models,
                "CONVY_USER_MODEL": "scripted-user",
                "CONVY_JUDGE_MODEL": "scripted-judge",
            }
        )
        return cls(folder, environ)

    def timed(self, command: list[str]) -> float:
        """Seconds `command` takes in the project, from its start to its end."""
        started = time.perf_counter()
        done = subprocess.run(command, cwd=self.folder, env=self.environ, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
        return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.1)
    options = parser.parse_args()
    agent = LocalServer(Slow(SupportBot(), options.latency))
    models = LocalServer(Slow(ScriptedModels.bundled(), options.latency))
    agent.start()
    models.start()
    commands = {
        "convy run": [sys.executable, "-m", "convy", "run"],
        "pytest --convy": [sys.executable, "-m", "pytest", "--convy", "-q"],
    }
    walls: dict[str, list[float]] = {name: [] for name in commands}
    try:
        with tempfile.TemporaryDirectory() as folder:
            bench = Bench.made(Path(folder), agent.url, models.url)
            for command in commands.values():
                bench.timed(command)  # a first round, not counted, fills the bytecode cache
            for _ in range(options.rounds):
                for name, command in commands.items():
                    walls[name].append(bench.timed(command))
    finally:
        agent.stop()
        models.stop()
    medians = {name: statistics.median(times) for name, times in walls.items()}
    ratio = medians["pytest --convy"] / medians["convy run"]
    print(f"20 scenarios x 3 attempts, {options.latency * 1000:.0f} ms per request, {options.rounds} rounds")
    for name, times in walls.items():
        print(f"{name:<16} median {medians[name]:6.2f} s   ({', '.join(f'{t:.2f}' for t in times)})")
    print(f"ratio pytest/convy run: {ratio:.3f} (goal ≤ {GOAL})")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
