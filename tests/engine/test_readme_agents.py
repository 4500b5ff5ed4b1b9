"""Every agent example of the docs (docs/agents.md, and any page that marks one), played as written by
`convy run` against a real local server of its shape: the LiteLLM proxy (OpenAI streaming), an ASGI
agent with threads, sessions, cookies, streams and OAuth2 (tests/servers/threads.py), one with the
demands of agent frameworks' own servers (tests/servers/frameworks.py), a Responses API server, an
a2a-sdk agent, pydantic-ai's A2A server (fasta2a), agno's AgentOS, and pydantic-ai's AG-UI and
Vercel AI adapters (the LangGraph and ADK presets are played against those frameworks' servers in
test_presets.py). Only `${VAR}`s are filled in; each example's file is the page's text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.servers.a2a_agent import A2aAgent
from tests.servers.agno_server import AGENT, AgnoOs, remembering
from tests.servers.fasta2a_agent import PydanticShop
from tests.servers.frameworks import TOOL_TEXT, FrameworkServer
from tests.servers.litellm_proxy import KEY, LiteLLMProxy
from tests.servers.models import ModelServer
from tests.servers.responses_server import ResponsesServer
from tests.servers.threads import ThreadServer
from tests.servers.tool_model import TOOL_TEXT as UI_TOOL_TEXT
from tests.servers.ui_servers import UiServer
from tests.support.command import convy, lines, only_run
from tests.support.readme import examples

SCENARIO = """\
name: order
turns:
  - Where is order 4411?
  - Thanks, and when will it arrive?
checks:
  - contains: "4411"
"""


def test_the_docs_have_one_example_for_each_shape() -> None:
    assert list(examples()) == [
        "openai-stream",
        "template-sse",
        "langgraph-threads",
        "header-session",
        "first-answer-id",
        "form-body",
        "ag-ui-ids",
        "ui-message-parts",
        "tool-filter",
        "adk-events",
        "oauth2",
        "openai-responses",
        "ag-ui",
        "ag-ui-agno",
        "vercel-ai",
        "a2a",
        "a2a-pydantic-ai",
        "a2a-agno",
        "langgraph",
        "adk",
    ]


def played(tmp_path: Path, name: str, environ: dict[str, str]) -> list[dict[str, object]]:
    """The example played by `convy run` (two scripted turns, one check); its attempt lines."""
    root = tmp_path / "project"
    (root / "scenarios").mkdir(parents=True)
    (root / "agents").mkdir()
    (root / "scenarios" / "order.yaml").write_text(SCENARIO)
    (root / "agents" / "bot.yaml").write_text(examples()[name])
    done = convy("run", "--repeat", "2", cwd=root, env=environ)
    assert done.returncode == 0, done.stdout + done.stderr
    found = lines(only_run(root / "results"))
    assert len(found) == 2
    for line in found:
        held = {
            "claim": "contains '4411'",
            "pass": True,
            "grade": None,
            "reason": "answer 1 has it",
            "check": True,
        }
        # every attempt held: two answers, the order number in them
        assert line["decision"] == {"type": "verdict", "holds": True, "claims": [held]}
        assert len(line["turns"]) == 2  # type: ignore[arg-type]
    return found


def firsts(found: list[dict[str, object]]) -> list[object]:
    return [turn["first"] for line in found for turn in line["turns"]]  # type: ignore[attr-defined,index]


@pytest.fixture
def threads() -> Iterator[ThreadServer]:
    with ThreadServer() as server:
        yield server


def test_openai_streaming(tmp_path: Path, litellm_proxy: LiteLLMProxy) -> None:
    found = played(tmp_path, "openai-stream", {"AGENT_URL": litellm_proxy.url, "AGENT_KEY": KEY})
    assert all(isinstance(first, float) for first in firsts(found))
    assert found[0]["turns"][1]["agent"].endswith("(2 user messages)")  # type: ignore[index]


def test_a_template_streamed_as_server_sent_events(tmp_path: Path, threads: ThreadServer) -> None:
    found = played(tmp_path, "template-sse", {"AGENT_URL": threads.url})
    assert all(isinstance(first, float) for first in firsts(found))


def test_langgraph_threads(tmp_path: Path, threads: ThreadServer) -> None:
    played(tmp_path, "langgraph-threads", {"AGENT_URL": threads.url})
    started = [seen for seen in threads.requests if seen.method == "POST" and seen.path == "/threads"]
    ended = [seen for seen in threads.requests if seen.method == "DELETE"]
    assert len(started) == 2 and len(ended) == 2


def test_a_header_session(tmp_path: Path, threads: ThreadServer) -> None:
    played(tmp_path, "header-session", {"AGENT_URL": threads.url})
    turns = [seen for seen in threads.requests if seen.path == "/sessions/turn"]
    assert len(turns) == 4 and all(seen.headers.get("x-session-id") for seen in turns)
    assert len({seen.headers["x-session-id"] for seen in turns}) == 2


def test_an_id_from_the_first_answer(tmp_path: Path, threads: ThreadServer) -> None:
    played(tmp_path, "first-answer-id", {"AGENT_URL": threads.url})
    bodies = [seen.body for seen in threads.requests if seen.path == "/chat"]
    # each conversation's first turn has no id yet, its second sends the one its first answer gave
    assert sorted("conversation_id" in body for body in bodies) == [False, False, True, True]
    assert len({body["conversation_id"] for body in bodies if "conversation_id" in body}) == 2


@pytest.fixture
def frameworks() -> Iterator[FrameworkServer]:
    with FrameworkServer() as server:
        yield server


def answers(found: list[dict[str, object]]) -> list[str]:
    return [turn["agent"] for line in found for turn in line["turns"]]  # type: ignore[attr-defined,index]


def seconds(found: list[dict[str, object]]) -> list[str]:
    """The answer of each attempt's second turn."""
    return [line["turns"][1]["agent"] for line in found]  # type: ignore[index]


def test_a_form_body(tmp_path: Path, frameworks: FrameworkServer) -> None:
    found = played(tmp_path, "form-body", {"AGENT_URL": frameworks.url})
    assert all(said.endswith("(turn 2)") for said in seconds(found)), "the first answer's session was kept"
    runs = frameworks.seen("/agents/support/runs")
    assert all(seen.status == 200 for seen in runs)
    assert sorted("session_id" in seen.body for seen in runs) == [False, False, True, True]
    assert len(frameworks.sessions) == 2, "one session per conversation, never one shared"


def test_ids_for_every_message_and_run(tmp_path: Path, frameworks: FrameworkServer) -> None:
    found = played(tmp_path, "ag-ui-ids", {"AGENT_URL": frameworks.url})
    assert all(said.endswith("(2 user messages)") for said in seconds(found)), "the history came along"
    runs = frameworks.seen("/ag-ui")
    assert [seen.status for seen in runs] == [200] * 4
    assert len({seen.body["runId"] for seen in runs}) == 4


def test_ui_message_parts(tmp_path: Path, frameworks: FrameworkServer) -> None:
    played(tmp_path, "ui-message-parts", {"AGENT_URL": frameworks.url})
    assert [seen.status for seen in frameworks.seen("/ui/chat")] == [200] * 4


def test_only_the_ai_text_of_a_stream_with_tools(tmp_path: Path, frameworks: FrameworkServer) -> None:
    found = played(tmp_path, "tool-filter", {"AGENT_URL": frameworks.url})
    assert all(answer.startswith("echo: ") for answer in answers(found))
    assert not any(TOOL_TEXT in answer or "4411?echo" in answer for answer in answers(found))


def test_the_last_of_a_list_of_events(tmp_path: Path, frameworks: FrameworkServer) -> None:
    found = played(tmp_path, "adk-events", {"AGENT_URL": frameworks.url})
    assert all(said.endswith("(turn 2)") for said in seconds(found))
    assert frameworks.sessions == {}, "every session made was deleted"


def test_oauth2_client_credentials(tmp_path: Path) -> None:
    with ThreadServer(auth=True) as server:
        environ = {
            "AGENT_URL": server.url,
            "TOKEN_URL": f"{server.url}/oauth/token",
            "CLIENT_ID": server.client_id,
            "CLIENT_SECRET": server.client_secret,
        }
        played(tmp_path, "oauth2", environ)
    assert len(server.issued) == 1, "one token for the whole run"
    assert server.grants[0]["scope"] == "agent.chat"


def test_the_responses_api(tmp_path: Path) -> None:
    with ResponsesServer() as server:
        found = played(tmp_path, "openai-responses", {"AGENT_URL": server.url})
    bodies = server.bodies()
    assert sorted("previous_response_id" in body for body in bodies) == [False, False, True, True]
    assert all(body["model"] == "support-bot" and body["stream"] for body in bodies)
    assert all(isinstance(first, float) for first in firsts(found))


def test_a2a(tmp_path: Path) -> None:
    with ExitStack() as stack:
        agent = stack.enter_context(A2aAgent())
        played(tmp_path, "a2a", {"A2A_URL": f"{agent.url}/task"})
        run = json.loads(next((tmp_path / "project" / "results").glob("*/*/run.json")).read_text())
    assert run["agent_version"] == "Shoe Shop 2.4.1"


def agent_version(tmp_path: Path) -> object:
    return json.loads(next((tmp_path / "project" / "results").glob("*/*/run.json")).read_text())[
        "agent_version"
    ]


def test_a2a_pydantic_ai(tmp_path: Path) -> None:
    with ModelServer(remembering) as model, PydanticShop(model.url) as shop:
        played(tmp_path, "a2a-pydantic-ai", {"PYDANTIC_AI_URL": shop.url.rstrip("/")})
    assert agent_version(tmp_path) == "Shoe Shop 3.1.0"
    assert len(model.processed) == 4


def test_a2a_agno(tmp_path: Path, agno_os: AgnoOs) -> None:
    before = len(agno_os.model.processed)
    played(tmp_path, "a2a-agno", {"AGENT_OS": agno_os.url, "AGENT_ID": AGENT})
    assert agent_version(tmp_path) == "Shoe Shop 1.0.0"
    assert len(agno_os.model.processed) - before == 4


def test_ag_ui(tmp_path: Path, pydantic_ai_server: UiServer) -> None:
    found = played(tmp_path, "ag-ui", {"AGENT_URL": pydantic_ai_server.url})
    assert all(UI_TOOL_TEXT not in answer for answer in answers(found))
    assert all(turn["steps"] for line in found for turn in line["turns"])  # type: ignore[attr-defined]


def test_ag_ui_agno(tmp_path: Path, agno_server: UiServer) -> None:
    found = played(tmp_path, "ag-ui-agno", {"AGENT_OS": agno_server.url})
    assert all(UI_TOOL_TEXT not in answer for answer in answers(found))
    assert all(turn["steps"] for line in found for turn in line["turns"])  # type: ignore[attr-defined]


def test_vercel_ai(tmp_path: Path, pydantic_ai_server: UiServer) -> None:
    found = played(tmp_path, "vercel-ai", {"AGENT_URL": pydantic_ai_server.url})
    assert all(UI_TOOL_TEXT not in answer for answer in answers(found))
    assert all(turn["steps"] for line in found for turn in line["turns"])  # type: ignore[attr-defined]
