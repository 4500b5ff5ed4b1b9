"""`convy draft` on a large OTLP JSON trace file: its peak memory (the child process's maximum RSS)
and its time, with a check that every conversation was drafted once with all its turns.

    python benchmarks/drafting.py                  # a 100 MB file
    python benchmarks/drafting.py --megabytes 5    # quick

The file is written as the Collector's file exporter writes one: one export request a line, each a
model call's span with the GenAI attributes, carrying the whole history so far (a call's input is
every earlier message), a conversation's turns each a trace of their own with the conversation id
on the agent's parent span (written after its child), half of the conversations with no id at all
(found by the history they carry)."""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TURNS = 8
WORDS = [
    "order",
    "refund",
    "parcel",
    "invoice",
    "delivery",
    "account",
    "password",
    "address",
    "store",
    "credit",
]


def message(role: str, text: str) -> dict[str, object]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def said(conversation: int, turn: int, who: str) -> str:
    words = " ".join(WORDS[(conversation + turn + n) % len(WORDS)] for n in range(24))
    return f"{who} {conversation} turn {turn}: about my {words}, reference {conversation * 100 + turn}."


def attribute(key: str, value: str) -> dict[str, object]:
    return {"key": key, "value": {"stringValue": value}}


def line(trace: str, span: str, parent: str, at: int, attributes: list[dict[str, object]]) -> str:
    made: dict[str, object] = {
        "traceId": trace,
        "spanId": span,
        "name": "chat",
        "startTimeUnixNano": str(at),
        "endTimeUnixNano": str(at + 1000),
        "attributes": attributes,
    }
    if parent:
        made["parentSpanId"] = parent
    request = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": [made]}]}]}
    return json.dumps(request, separators=(",", ":")) + "\n"


def written(path: Path, megabytes: float) -> int:
    """The file written up to `megabytes`; how many conversations it holds."""
    size = 0
    conversation = 0
    with path.open("w") as out:
        while size < megabytes * 1_000_000:
            conversation += 1
            history = [message("system", "You are the support agent of a shop. Answer briefly.")]
            for turn in range(TURNS):
                history.append(message("user", said(conversation, turn, "user")))
                answer = [message("assistant", said(conversation, turn, "agent"))]
                n = conversation * 100 + turn
                trace, call, agent = f"{n:032x}", f"{2 * n:016x}", f"{2 * n + 1:016x}"
                at = 1_700_000_000_000_000_000 + n * 1_000_000
                text = line(
                    trace,
                    call,
                    agent,
                    at,
                    [
                        attribute("gen_ai.input.messages", json.dumps(history)),
                        attribute("gen_ai.output.messages", json.dumps(answer)),
                    ],
                )
                ids = [attribute("gen_ai.conversation.id", f"c-{conversation}")] if conversation % 2 else []
                parent = line(trace, agent, "", at - 1, ids)
                out.write(text + parent)
                size += len(text) + len(parent)
                history += answer
    return conversation


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, default=100)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        here = Path(folder)
        traces = here / "traces.jsonl"
        conversations = written(traces, arguments.megabytes)
        size = traces.stat().st_size / 1_000_000
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "convy", "draft", "traces.jsonl", "--claim", "The agent helps."],
            cwd=here,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        files = sorted((here / "scenarios" / "drafted").glob("*.yaml"))
        turns = [file.read_text().count("\n- ") for file in files]
        complete = done.returncode == 0 and len(files) == conversations
        print(
            f"convy draft: {size:.1f} MB, {conversations} conversations of {TURNS} turns, "
            f"{len(files)} drafted in {seconds:.1f} s, peak RSS {peak:.0f} MB: "
            f"{'DONE' if complete else 'FAIL'}"
        )
        if not complete:
            print(done.stdout[-2000:], done.stderr[-2000:])
        return 0 if complete and min(turns, default=0) >= TURNS else 1


if __name__ == "__main__":
    sys.exit(main())
