"""`protocol: ag-ui` and `protocol: vercel-ai` played by `convy run` against the frameworks' own
servers — pydantic-ai's AG-UI and Vercel AI adapters, agno AgentOS's AG-UI interface — each started
once, its agent on a scripted model that calls a tool on every turn and then answers with every
earlier user message. A three-turn memory scenario holds on each (the history goes with every run,
each message with its id), the tool's call is a step with its arguments and result, its text never
inside an answer; each run has its own ids. A RUN_ERROR and an `error` part are failures with the
server's message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from convy.play.agent import AgentFailure
from convy.play.wire.agui import AgUiEvents
from convy.play.wire.stream import Event
from convy.play.wire.vercel_ai import UiMessageParts
from tests.servers.tool_model import TOOL, TOOL_TEXT
from tests.servers.ui_servers import UiServer
from tests.support.command import convy, lines, only_run

SCENARIO = """\
name: memory
turns:
  - My name is Ada.
  - I live in Lisbon.
  - What is my name?
checks:
  - contains: "Ada.; I live in Lisbon"
"""


def played(tmp_path: Path, agent: str) -> list[dict[str, object]]:
    root = tmp_path / "project"
    (root / "scenarios").mkdir(parents=True)
    (root / "agents").mkdir()
    (root / "scenarios" / "memory.yaml").write_text(SCENARIO)
    (root / "agents" / "bot.yaml").write_text(agent)
    done = convy("run", "--repeat", "2", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    found = lines(only_run(root / "results"))
    assert len(found) == 2
    for line in found:
        assert line["decision"]["holds"] is True, line  # type: ignore[index]
        turns: list[dict[str, object]] = line["turns"]  # type: ignore[assignment]
        assert len(turns) == 3
        for turn in turns:
            assert TOOL_TEXT not in str(turn["agent"])
            (step,) = turn["steps"]  # type: ignore[misc]
            # the arguments and result as each server sends them (agno's result JSON-quoted)
            assert step["type"] == "call" and step["name"] == TOOL
            assert json.loads(step["arguments"]) == {"order": "4411"}
            assert step["result"] in (TOOL_TEXT, json.dumps(TOOL_TEXT))
        assert str(turns[2]["agent"]).endswith("Before that you said: My name is Ada.; I live in Lisbon..")
    return found


def asked(server: UiServer, since: int) -> list[list[dict[str, object]]]:
    """The user messages of each request the framework made of the model after the tool's result."""
    return [
        [message for message in request["messages"] if message["role"] == "user"]
        for request in server.model.requests[since:]
        if request["messages"][-1]["role"] == "tool"
    ]


def test_ag_ui_on_pydantic_ai(tmp_path: Path, pydantic_ai_server: UiServer) -> None:
    since = len(pydantic_ai_server.model.requests)
    played(tmp_path, f"url: {pydantic_ai_server.url}/ag-ui\nprotocol: ag-ui\n")
    # six runs (two conversations at once), each with the dialogue so far: 1, 2, then 3 user messages
    assert sorted(len(users) for users in asked(pydantic_ai_server, since)) == [1, 1, 2, 2, 3, 3]


def test_vercel_ai_on_pydantic_ai(tmp_path: Path, pydantic_ai_server: UiServer) -> None:
    since = len(pydantic_ai_server.model.requests)
    played(tmp_path, f"url: {pydantic_ai_server.url}/chat\nprotocol: vercel-ai\n")
    assert sorted(len(users) for users in asked(pydantic_ai_server, since)) == [1, 1, 2, 2, 3, 3]


def test_ag_ui_on_agno(tmp_path: Path, agno_server: UiServer) -> None:
    # agno keeps the history in its session, keyed by the thread id, and its runs by run id: the
    # third turn holds only when each conversation has its own thread and every run its own id
    since = len(agno_server.model.requests)
    played(tmp_path, f"url: {agno_server.url}/agui\nprotocol: ag-ui\n")
    assert sorted(len(users) for users in asked(agno_server, since)) == [1, 1, 2, 2, 3, 3]


def test_the_agent_protocol_setting_names_them(tmp_path: Path, pydantic_ai_server: UiServer) -> None:
    root = tmp_path / "project"
    (root / "scenarios").mkdir(parents=True)
    (root / "scenarios" / "memory.yaml").write_text(SCENARIO)
    environ = {"CONVY_AGENT_URL": f"{pydantic_ai_server.url}/chat", "CONVY_AGENT_PROTOCOL": "vercel-ai"}
    done = convy("run", cwd=root, env=environ)
    assert done.returncode == 0, done.stdout + done.stderr
    found = lines(only_run(root / "results"))
    assert found and all(line["decision"]["holds"] is True for line in found)  # type: ignore[index]


def test_a_run_error_is_a_failure_with_the_servers_message() -> None:
    fold = AgUiEvents("http://agent/ag-ui")
    fold.add(Event("message", {"type": "TEXT_MESSAGE_CONTENT", "delta": "Hel"}))
    with pytest.raises(AgentFailure) as failed:
        fold.add(Event("message", {"type": "RUN_ERROR", "message": "model quota exceeded"}))
    assert failed.value.reason == "run_failed"
    assert failed.value.message == "model quota exceeded"
    assert "model quota exceeded" in failed.value.detail


def test_an_error_part_is_a_failure_with_the_servers_message() -> None:
    fold = UiMessageParts("http://agent/chat")
    with pytest.raises(AgentFailure) as failed:
        fold.add(Event("message", {"type": "error", "errorText": "the tool fell over"}))
    assert failed.value.reason == "stream_broken"
    assert failed.value.message == "the tool fell over"


def test_tool_calls_streamed_in_pieces_are_steps_not_text() -> None:
    fold = AgUiEvents("http://agent/ag-ui")
    for data in (
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "lookup"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"order": '},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "4411}"},
        {"type": "TOOL_CALL_RESULT", "toolCallId": "c1", "content": "shipped"},
        {"type": "TEXT_MESSAGE_CONTENT", "delta": "It shipped."},
    ):
        fold.add(Event("message", data))
    answer = fold.reply().answer
    assert answer.text == "It shipped."
    assert json.loads(msgspec_json(answer.steps)) == [
        {"type": "call", "name": "lookup", "arguments": '{"order": 4411}', "result": "shipped"}
    ]


def msgspec_json(value: object) -> str:
    import msgspec

    return msgspec.json.encode(value).decode()
