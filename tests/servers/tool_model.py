"""A scripted model that calls a tool, for the agent frameworks' own servers (pydantic-ai, agno) to
run on: the answer function of a ModelServer (tests/servers/models.py). Asked while the latest
message is not a tool's result, it calls `order_status` with `{"order": "4411"}`; asked after the
result, it answers text that repeats every earlier user message (so an answer shows what the
agent remembers) and never the tool's text. Streamed (`stream: true`) it answers chat-completion
chunks as server-sent events, the text in pieces of 5 characters."""

from __future__ import annotations

import json
from typing import Any

from tests.servers.models import Canned, Request

TOOL = "order_status"
ARGUMENTS = '{"order": "4411"}'
TOOL_TEXT = "status: shipped on Monday"
"""What the frameworks' servers' tool returns: it must never be inside an answer."""


def content(message: dict[str, Any]) -> str:
    given = message.get("content")
    if isinstance(given, list):
        return "".join(str(part.get("text", "")) for part in given if isinstance(part, dict))
    return str(given or "")


def said(messages: list[dict[str, Any]]) -> str:
    """The answer after the tool: the latest user message, then the earlier ones."""
    users = [content(message) for message in messages if message.get("role") == "user"]
    earlier = "; ".join(users[:-1]) or "nothing"
    return f"Order 4411 noted for: {users[-1] if users else ''}. Before that you said: {earlier}."


def chunk(model: str, delta: dict[str, Any], finished: str | None = None) -> str:
    body = {
        "id": "chatcmpl-tools",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finished}],
    }
    return f"data: {json.dumps(body)}\n\n"


def tool_model(request: Request) -> str | Canned:
    messages: list[dict[str, Any]] = request.get("messages", [])
    model = str(request.get("model", ""))
    called = bool(messages) and messages[-1].get("role") == "tool"
    call = {
        "id": f"call_{len(messages)}",
        "type": "function",
        "function": {"name": TOOL, "arguments": ARGUMENTS},
    }
    if not request.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": said(messages) if called else None}
        if not called:
            message["tool_calls"] = [call]
        choice = {"index": 0, "message": message, "finish_reason": "stop" if called else "tool_calls"}
        body = {"id": "chatcmpl-tools", "object": "chat.completion", "created": 0, "model": model}
        return Canned(
            200, {**body, "choices": [choice], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
        )
    events = [chunk(model, {"role": "assistant", "content": ""})]
    if called:
        text = said(messages)
        events += [chunk(model, {"content": text[start : start + 5]}) for start in range(0, len(text), 5)]
        events.append(chunk(model, {}, "stop"))
    else:
        events.append(chunk(model, {"tool_calls": [{"index": 0, **call}]}))
        events.append(chunk(model, {}, "tool_calls"))
    events.append("data: [DONE]\n\n")
    return Canned(200, "".join(events).encode(), {"Content-Type": "text/event-stream"})
