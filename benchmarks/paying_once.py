"""What paying once spares on the demo: the bundled project played three times against its
deterministic support bot and scripted models (each a real local HTTP server) — a first run, a
second with that run as its baseline, a third with the baseline and `--replay user` — counting the
requests the model server gets from the simulated user and from the judge in each.

    python benchmarks/paying_once.py

Exit 1 when the replayed run asked any model anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path

from convy.demo.localserver import LocalServer
from convy.demo.scripted import ScriptedModels
from convy.demo.servers import DemoServers
from convy.demo.supportbot import SupportBot


class Counted:
    """The demo's scripted models, counting requests by role (a `response_format` is the judge's)."""

    def __init__(self) -> None:
        self.models = ScriptedModels.bundled()
        self.asked: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        role = "judge" if body and "response_format" in json.loads(body) else "user"
        with self._lock:
            self.asked[role] += 1
        return self.models(method, path, headers, body)


def main() -> int:
    counted = Counted()
    agent, models = LocalServer(SupportBot()), LocalServer(counted)
    agent.start()
    models.start()
    shown: list[tuple[str, int, int]] = []
    try:
        with tempfile.TemporaryDirectory() as folder:
            results = Path(folder) / "results"
            base = [
                sys.executable, "-m", "convy", "run",
                "--project", str(DemoServers().project),
                "--results", str(results),
                "--model-url", models.url,
                "--user-model", "scripted-user",
                "--judge-model", "scripted-judge",
            ]  # fmt: skip
            environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_"))}
            environ["CONVY_DEMO_URL"] = agent.url
            baseline = ""
            for name, extra in (
                ("first run", ()),
                ("with the baseline", ("--baseline",)),
                ("with the baseline, --replay user", ("--baseline", "--replay", "user")),
            ):
                before = counted.asked.copy()
                flags = [*extra[:1], baseline, *extra[1:]] if extra else []
                done = subprocess.run(
                    [*base, *flags], env=environ, capture_output=True, text=True, check=False
                )
                if done.returncode not in (0, 1):
                    print(done.stdout + done.stderr, file=sys.stderr)
                    return 1
                asked = counted.asked - before
                shown.append((name, asked["user"], asked["judge"]))
                baseline = baseline or str(next(results.glob("*/*")))
    finally:
        agent.stop()
        models.stop()
    print(f"{'run':<34} {'user-model requests':>20} {'judge requests':>15}")
    for name, user, judge in shown:
        print(f"{name:<34} {user:>20} {judge:>15}")
    return 1 if shown[-1][1] or shown[-1][2] else 0


if __name__ == "__main__":
    sys.exit(main())
