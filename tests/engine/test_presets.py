"""`protocol: langgraph` and `protocol: adk`, played by `convy run` as the docs' examples are
written against the frameworks' own servers — LangGraph's `langgraph dev` and Google ADK's
`adk api_server` (tests/servers/presets.py), each with a graph or agent that calls a tool and the
project's scripted model — on a three-turn memory scenario; and the mistakes of such agent files,
refused before any request."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers.models import ModelServer
from tests.servers.presets import TOOL_TEXT, adk_server, langgraph_server, order_model
from tests.support.command import convy, lines, only_run
from tests.support.readme import examples

MEMORY = """\
name: memory
turns:
  - My name is Ada.
  - Where is order 4411?
  - What is my name?
checks:
  - matches: "You first said: My name is Ada\\\\. \\\\(3 user messages\\\\)"
    in: last
  - tool:
      name: order_status
      args: {order: "4411"}
"""


@pytest.fixture(scope="session")
def order_model_server() -> Iterator[ModelServer]:
    with ModelServer(order_model) as server:
        yield server


@pytest.fixture(scope="session")
def langgraph(order_model_server: ModelServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with langgraph_server(order_model_server.url, tmp_path_factory.mktemp("langgraph")) as url:
        yield url


@pytest.fixture(scope="session")
def adk(order_model_server: ModelServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with adk_server(order_model_server.url, tmp_path_factory.mktemp("adk")) as url:
        yield url


def project(tmp_path: Path, agent: str) -> Path:
    root = tmp_path / "project"
    (root / "scenarios").mkdir(parents=True)
    (root / "agents").mkdir()
    (root / "scenarios" / "memory.yaml").write_text(MEMORY)
    (root / "agents" / "bot.yaml").write_text(agent)
    return root


def played(
    tmp_path: Path, name: str, url: str, assistant: str = "agent"
) -> tuple[dict[str, object], list[dict[str, object]]]:
    """The docs' example `name` played twice on the memory scenario (with `assistant` for the
    docs'): the run and its attempts, each of which held with three answers."""
    agent = examples()[name].replace("assistant: agent ", f"assistant: {assistant} ")
    assert name != "langgraph" or f"assistant: {assistant} " in agent
    root = project(tmp_path, agent)
    done = convy("run", "--repeat", "2", cwd=root, env={"AGENT_URL": url}, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    folder = only_run(root / "results")
    found = lines(folder)
    assert len(found) == 2
    for line in found:
        assert line["decision"]["holds"] is True, line["decision"]  # type: ignore[index]
        assert len(line["turns"]) == 3  # type: ignore[arg-type]
    return json.loads((folder / "run.json").read_text()), found


def turns(found: list[dict[str, object]]) -> list[dict[str, object]]:
    return [turn for line in found for turn in line["turns"]]  # type: ignore[attr-defined]


def got(url: str, body: object = None) -> object:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 (our own loopback server)
        return json.loads(answer.read())


def held_turns(found: list[dict[str, object]]) -> None:
    """Every answer the AI's own text, and each turn's tool call a step with its result."""
    for number, turn in enumerate(turns(found)):
        said = turn["agent"]
        # the AI's text once, never the tool's nor the user's message
        assert (
            said
            == f"Order 4411 is on its way. You first said: My name is Ada. ({number % 3 + 1} user messages)"
        )
        (step,) = turn["steps"]  # type: ignore[misc]
        assert (step["type"], step["name"]) == ("call", "order_status"), number
        assert json.loads(step["arguments"]) == {"order": "4411"}
        assert step["result"] == f"order 4411 {TOOL_TEXT}"
        assert isinstance(turn["first"], float)
        usage = turn["usage"]
        assert isinstance(usage, dict) and usage["input"] > 0 and usage["output"] > 0


@pytest.mark.parametrize("assistant", ["agent", "whole"])
def test_langgraph_remembers_calls_a_tool_and_deletes_its_threads(
    tmp_path: Path, langgraph: str, assistant: str
) -> None:
    """Streamed by the model (AI message chunks, the tool call in pieces) or not (whole messages)."""
    run, found = played(tmp_path, "langgraph", langgraph, assistant)
    held_turns(found)
    info = got(f"{langgraph}/info")
    assert isinstance(info, dict)
    assert (
        run["agent_version"] == f"langgraph-api {info['version']} (langgraph {info['langgraph_py_version']})"
    )
    threads = got(f"{langgraph}/threads/search", {"metadata": {}, "limit": 1000})
    assert isinstance(threads, list)
    assert not [thread for thread in threads if "convy" in thread["metadata"]], "every thread was deleted"


def test_adk_remembers_calls_a_tool_and_deletes_its_sessions(tmp_path: Path, adk: str) -> None:
    run, found = played(tmp_path, "adk", adk)
    held_turns(found)
    version = got(f"{adk}/version")
    assert isinstance(version, dict)
    assert run["agent_version"] == f"google-adk {version['version']} ({version['language']})"
    assert got(f"{adk}/apps/orders/users/convy/sessions") == [], "every session was deleted"


def test_an_assistant_the_server_does_not_have_fails_the_attempt(tmp_path: Path, langgraph: str) -> None:
    """A graph id that is not served fails the attempt with the run URL and the server's words."""
    root = project(tmp_path, "url: ${AGENT_URL}\nprotocol: langgraph\nassistant: nowhere\n")
    done = convy("run", "--repeat", "1", cwd=root, env={"AGENT_URL": langgraph}, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    (line,) = lines(only_run(root / "results"))
    decision = line["decision"]
    assert isinstance(decision, dict) and decision["type"] == "failed", decision
    assert decision["reason"] == "http_422"
    assert "/runs/stream" in decision["detail"] and "nowhere" in decision["detail"]


@pytest.mark.parametrize(
    ("agent", "said"),
    [
        ("url: http://127.0.0.1:9/\nprotocol: adk\n", "protocol adk needs `app`"),
        (
            "url: http://127.0.0.1:9/\nprotocol: langgraph\nsession: {id: thread_id}\n",
            "protocol langgraph makes and deletes its own session",
        ),
        (
            "url: http://127.0.0.1:9/\nprotocol: langgraph\nbody: {a: 1}\n",
            "body belong to the template protocol",
        ),
        ("url: http://127.0.0.1:9/\nprotocol: adk\napp: x\nstream: ndjson\n", "adk streams as sse only"),
        ("url: http://127.0.0.1:9/t/$conversation\nprotocol: langgraph\n", "the server's base URL"),
    ],
)
def test_a_preset_file_with_a_mistake_is_refused_before_any_request(
    tmp_path: Path, agent: str, said: str
) -> None:
    root = project(tmp_path, agent)
    done = convy("run", cwd=root)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr and "agents/bot.yaml" in done.stderr
