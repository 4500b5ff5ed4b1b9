"""A LangGraph-style agent: a thread started for each conversation."""

from __future__ import annotations

from typing import Any

import msgspec

from convy.play.wire.spec import AgentSpec

RUN_BODY = {"assistant_id": "agent", "input": {"messages": [{"role": "user", "content": "$message"}]}}


def spec(fields: dict[str, Any]) -> AgentSpec:
    return msgspec.convert(fields, AgentSpec)


def threads(url: str, end: bool = True, **fields: object) -> AgentSpec:
    """A LangGraph-style agent: a thread started for each conversation, deleted after it."""
    session: dict[str, object] = {
        "start": {"url": f"{url}/threads", "body": {"user": "$conversation"}, "id": "thread_id"}
    }
    if end:
        session["end"] = {"url": f"{url}/threads/$session", "method": "DELETE"}
    return spec(
        {
            "url": f"{url}/threads/$session/runs",
            "body": RUN_BODY,
            "answer": "messages.-1.content",
            "session": session,
            **fields,
        }
    )
