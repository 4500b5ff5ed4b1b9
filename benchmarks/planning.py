"""How long a run of very many scenarios takes to start playing: a project of N scenarios (50,000 by
default, in files of 500), each one scripted turn and a check, played by the real `python -m convy
run` against a loopback agent; the figure is the wall time from the command's start to the agent's
first request (reading the project, planning the run, writing run.json), then the command is
stopped. Planning must grow linearly with the scenarios.

    python benchmarks/planning.py              # 50,000 scenarios
    python benchmarks/planning.py --count 5000
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from convy.demo.localserver import LocalServer

PER_FILE = 500
Triple = tuple[int, dict[str, str], bytes]


class FirstRequest:
    """A loopback agent that notes when its first request came and answers every one."""

    def __init__(self) -> None:
        self.first = threading.Event()
        self.at = 0.0

    def __call__(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Triple:
        if not self.first.is_set():
            self.at = time.monotonic()
            self.first.set()
        said = {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}
        return 200, {"Content-Type": "application/json"}, json.dumps(said).encode()


def project(folder: Path, count: int) -> None:
    (folder / "scenarios").mkdir(parents=True)
    for start in range(0, count, PER_FILE):
        items = "".join(
            f"- name: s{n:06d}\n  turns: [hello]\n  checks: [{{contains: ok}}]\n"
            for n in range(start, min(count, start + PER_FILE))
        )
        (folder / "scenarios" / f"part{start // PER_FILE:04d}.yaml").write_text(items)


def started(count: int) -> float:
    """Seconds from `convy run`'s start to the agent's first request."""
    with tempfile.TemporaryDirectory(prefix="convy-planning-") as scratch:
        root = Path(scratch)
        project(root, count)
        agent = FirstRequest()
        with LocalServer(agent) as server:
            environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_"))}
            begun = time.monotonic()
            process = subprocess.Popen(
                [sys.executable, "-m", "convy", "run", "--agent-url", f"{server.url}/chat", "--repeat", "1"],
                cwd=root,
                env=environ,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                while not agent.first.wait(0.1):
                    if process.poll() is not None:
                        raise SystemExit(f"convy ended with {process.returncode} before any request")
                return agent.at - begun
            finally:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=120)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=50_000, help="scenarios (default 50,000)")
    count = parser.parse_args().count
    seconds = started(count)
    print(f"{count:,} scenarios: the first attempt started {seconds:.1f} s after `convy run` did")


if __name__ == "__main__":
    main()
