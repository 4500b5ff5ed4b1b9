"""What the gate says of a real small judge, with default settings: `convy run` on the judge set
(`benchmarks/judge_set/`, its 48 labelled dialogues and their scenarios) with SmolLM2-135M-Instruct
on llama.cpp as the judge, and a local stand-in answering at once as the agent and the simulated user
(so the minutes go to the judge alone). It prints each checkout's exit code and the comment's first
lines: the gate's decision, its rule and the Judge line.

    python benchmarks/judge_gate.py --server-python /path/to/llama-venv/bin/python \\
        [--convy-src OLD_CHECKOUT/src ...]

Without `--convy-src` it runs this checkout; each one given is run too, in turn, against the same
server (set up as in benchmarks/README.md)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from small_model import SmallModelServer

ROOT = Path(__file__).resolve().parent.parent
SET = Path(__file__).resolve().parent / "judge_set"


class StandIn(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that ends a simulated user's conversation at once and
    answers an agent's turn with one fixed sentence."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        first = str((body.get("messages") or [{}])[0].get("content", "")).lower()
        text = "FINISHED" if "you are" in first else "Thanks, that is done for you now."
        answer = {
            "id": "stand-in",
            "object": "chat.completion",
            "model": body.get("model", "stand-in"),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
        }
        out = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: object) -> None:
        return


def played(src: Path, stand_in: str, judge: str) -> str:
    """One `convy run` of the judge set with default settings: its exit code and comment's head."""
    results = Path(tempfile.mkdtemp(prefix="convy-judge-gate-"))
    environ = {**os.environ, "PYTHONPATH": str(src), "OPENAI_API_KEY": "none"}
    command = [sys.executable, "-m", "convy", "run", "--project", str(SET), "--results", str(results)]
    command += ["--model-url", stand_in, "--user-model", "stand-in", "--judge-url", judge]
    command += ["--judge-model", "smollm2", "--agent-url", f"{stand_in}/chat/completions"]
    command += ["--agent-protocol", "openai-chat", "--repeat", "1", "--max-repeat", "1", "--concurrency", "1"]
    started = time.monotonic()
    done = subprocess.run(command, env=environ, capture_output=True, text=True, check=False)
    comment = sorted(results.glob("*/*/comment.md"))
    head = [line for line in comment[0].read_text().splitlines()[1:9] if line] if comment else [done.stderr]
    return f"{src}: exit {done.returncode} in {time.monotonic() - started:.0f} s\n  " + "\n  ".join(head)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-python", required=True, help="the venv's python with llama-cpp-python")
    parser.add_argument("--convy-src", nargs="*", default=[], help="other checkouts' src/ to run too")
    parser.add_argument("--seed", type=int, default=1, help="the server's sampling seed")
    arguments = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    stand_in = f"http://127.0.0.1:{server.server_address[1]}/v1"
    with SmallModelServer(arguments.server_python, "", 8192, seed=arguments.seed) as judge:
        for src in [ROOT / "src", *map(Path, arguments.convy_src)]:
            print(played(src, stand_in, judge.url), flush=True)
    server.shutdown()


if __name__ == "__main__":
    main()
