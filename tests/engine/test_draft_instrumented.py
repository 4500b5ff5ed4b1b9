"""The round trip with real instrumentation: the official `openai` client instrumented by
OpenInference or by `opentelemetry-instrumentation-openai-v2`, in an agent asking the local
OpenAI-compatible server; its spans and log records exported as the Collector's file exporter writes
them (and sent to Arize Phoenix); then `convy draft` on them, and `convy run` on the drafts against
the same agent: each conversation drafted once with its user's words in order and personal data
masked, every attempt judged, no user-model request made."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.servers.models import ModelServer, Request
from tests.support.phoenix import got
from tests.support.recordings import convy

CONVERSATIONS = {
    "sess-a": ["I want to return my shoes, write to jane.doe@example.com", "The order is 7781"],
    "sess-b": ["Do you ship to Norway?", "How long does it take?", "Thanks, bye"],
}
"""What two users said, played interleaved, turn by turn."""
MASKED = {
    "sess-a": ["I want to return my shoes, write to <email>", "The order is 7781"],
    "sess-b": CONVERSATIONS["sess-b"],
}


def answer(request: Request) -> str:
    """The agent's model echoes; the judge passes every claim; a brief drafted when asked."""
    format_ = request.get("response_format") or {}
    if format_.get("json_schema", {}).get("name") == "drafted_scenario" or "drafted_scenario" in json.dumps(
        format_
    ):
        return json.dumps({"user": "You are a customer of the shop.", "claims": ["The agent answers."]})
    if format_:
        return json.dumps({"decisions": [{"pass": True, "reason": "It did."} for _ in range(2)]})
    return f"Noted: {request['messages'][-1]['content']}"


ROOT = Path(__file__).resolve().parent.parent.parent
OLDER = Path(os.environ.get("TEST_OTEL_OLD") or ROOT / ".venv-otel-old" / "bin" / "python")
"""The Python of a virtual environment with opentelemetry-instrumentation-openai-v2 2.3b0 (and
`wrapt` below 2): its messages only in log events. `.ci/run` makes it."""


def python(flavor: str) -> str:
    """The Python the agent of `flavor` runs in (ours, but for openai-v2's older release)."""
    if flavor != "openai-v2-older":
        return sys.executable
    if not OLDER.exists():
        if os.environ.get("CI") or os.environ.get("TEST_OTEL_OLD"):
            pytest.fail(f"openai-v2 2.3b0 is not installed at {OLDER}: .ci/run installs it")
        pytest.skip(f"openai-v2 2.3b0 is not installed at {OLDER}: make .venv-otel-old as .ci/run does")
    return str(OLDER)


@contextmanager
def agent(
    flavor: str, model: ModelServer, folder: Path, environ: dict[str, str] | None = None
) -> Iterator[str]:
    """The instrumented agent in a process of its own, its URL; its files flushed when it ends."""
    more = {"PYTHONPATH": os.pathsep.join((str(ROOT / "src"), str(ROOT))), **(environ or {})}
    if flavor == "openai-v2-older":
        more["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"  # what it understood then
    started = subprocess.Popen(
        [
            python(flavor),
            "-m",
            "tests.servers.instrumented_agent",
            flavor,
            model.url,
            str(folder / "spans.jsonl"),
            str(folder / "logs.jsonl"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **more},
    )
    assert started.stdout is not None and started.stdin is not None
    try:
        yield started.stdout.readline().strip()
    finally:
        started.stdin.close()
        started.wait(60)


def talk(url: str) -> None:
    """The two conversations, interleaved: each turn sends the dialogue so far."""
    dialogues: dict[str, list[dict[str, str]]] = {session: [] for session in CONVERSATIONS}
    for turn in range(3):
        for session, said in CONVERSATIONS.items():
            if turn < len(said):
                dialogues[session].append({"role": "user", "content": said[turn]})
                reply = httpx.post(
                    f"{url}/chat", json={"messages": dialogues[session], "session": session}
                ).json()
                dialogues[session].append({"role": "assistant", "content": reply["reply"]["text"]})


def drafted_turns(folder: Path) -> list[list[str]]:
    return sorted(yaml.safe_load(file.read_text())["turns"] for file in folder.glob("*.yaml"))


def play(project: Path, url: str, model: ModelServer) -> list[dict[str, Any]]:
    """`convy run` on the drafts against the agent: the attempts it recorded."""
    (project / "agents").mkdir(exist_ok=True)
    (project / "agents" / "shop.yaml").write_text(
        f"url: {url}/chat\n"
        'body: {"messages": "$messages", "session": "$conversation"}\n'
        "answer: reply.text\n"
    )
    before = len(model.requests)
    done = convy(
        "run",
        "--model-url",
        model.url,
        "--user-model",
        "the-user",
        "--judge-model",
        "the-judge",
        "--repeat",
        "1",
        cwd=project,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not [r for r in model.requests[before:] if r.get("model") == "the-user"], "a user model was asked"
    (run,) = [p for p in (project / "results").glob("*/*") if p.is_dir()]
    assert "drafted from" in (run / "report.html").read_text(), "the report shows each scenario's source"
    return [json.loads(line) for line in (run / "attempts.jsonl").read_text().splitlines()]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("flavor", ["openai-v2", "openai-v2-older", "openinference", "openinference-genai"])
def test_real_instrumentation_drafts_each_conversation_once_and_the_drafts_replay(
    tmp_path: Path, flavor: str
) -> None:
    with ModelServer(answer) as model:
        with agent(flavor, model, tmp_path) as url:
            talk(url)
        sources = ["spans.jsonl", "logs.jsonl"] if flavor.startswith("openai-v2") else ["spans.jsonl"]
        project = tmp_path / "project"
        project.mkdir()
        for source in sources:
            (tmp_path / source).rename(project / source)
        claims = [
            "--brief",
            "--model-url",
            model.url,
            "--judge-model",
            "the-judge",
            "--claim",
            "The agent is polite.",
        ]
        done = convy("draft", *sources, *claims, cwd=project)
        assert done.returncode == 0, done.stderr
        assert drafted_turns(project / "scenarios" / "drafted") == sorted(MASKED.values())
        assert "masked 1 e-mail address" in done.stdout
        for file in (project / "scenarios" / "drafted").glob("*.yaml"):
            assert (
                "# drafted from a recorded conversation: review the claims before relying on them"
                in file.read_text()
            )
        with agent(flavor, model, tmp_path) as url:
            attempts = play(project, url, model)
    assert len(attempts) == 2
    assert all(a["decision"]["type"] == "verdict" and a["decision"]["holds"] for a in attempts)
    assert sorted([t["user"] for t in a["turns"]] for a in attempts) == sorted(MASKED.values())


@pytest.mark.timeout(600)
def test_phoenix_read_over_its_api_drafts_what_the_instrumented_agent_sent_it(
    tmp_path: Path, phoenix: str
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with ModelServer(answer) as model:
        with agent("openinference", model, tmp_path, {"PHOENIX_OTLP": phoenix}) as url:
            talk(url)
        calls = sum(len(said) for said in CONVERSATIONS.values())
        for _ in range(120):
            page = got(f"{phoenix}/v1/projects/default/spans?limit=1000")
            if isinstance(page, dict) and len(page["data"]) >= calls:
                break
            time.sleep(0.5)  # Phoenix stores what it received a moment later
        done = convy(
            "draft",
            "--phoenix",
            phoenix,
            "--project",
            "default",
            "--claim",
            "The agent is polite.",
            "--claim",
            "The agent answers.",
            cwd=project,
        )
        assert done.returncode == 0, done.stderr
        assert drafted_turns(project / "scenarios" / "drafted") == sorted(MASKED.values())
        sources = [
            yaml.safe_load(f.read_text())["source"]
            for f in (project / "scenarios" / "drafted").glob("*.yaml")
        ]
        assert all(s["url"] == f"{phoenix}/projects/default" for s in sources)
        with agent("openinference", model, tmp_path) as url:
            attempts = play(project, url, model)
    assert len(attempts) == 2 and all(a["decision"]["holds"] for a in attempts)
