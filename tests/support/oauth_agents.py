"""Agents behind a token endpoint (OAuth 2 client credentials) of the thread server."""

from __future__ import annotations

from typing import Any

import msgspec

from convy.play.wire.spec import AgentSpec
from tests.servers.threads import ThreadServer

SECRET = "cs-REAL-secret-9f3a7c"
CHAT = {"body": {"message": "$message", "conversation_id": ""}, "answer": "answer"}


def oauth(token_url: str, **fields: str) -> dict[str, str]:
    return {"token-url": token_url, "client-id": "convy-ci", "client-secret": SECRET, **fields}


def chat(server: ThreadServer, path: str = "/chat", **fields: Any) -> AgentSpec:
    """An agent at `path` whose every turn is a new chat, behind the server's token endpoint."""
    given = {"url": f"{server.url}{path}", **CHAT, "auth": {"oauth2": oauth(f"{server.url}/oauth/token")}}
    return msgspec.convert({**given, **fields}, AgentSpec)


def threads(server: ThreadServer) -> AgentSpec:
    """A LangGraph-style agent behind the server's token endpoint, with a scope and an audience."""
    return msgspec.convert(
        {
            "url": f"{server.url}/threads/$session/runs",
            "body": {"input": {"messages": [{"role": "user", "content": "$message"}]}},
            "answer": "messages.-1.content",
            "session": {
                "start": {"url": f"{server.url}/threads", "id": "thread_id"},
                "end": {"url": f"{server.url}/threads/$session", "method": "DELETE"},
            },
            "auth": {
                "oauth2": oauth(
                    f"{server.url}/oauth/token", scope="agent.chat", audience="https://agents.example"
                )
            },
        },
        AgentSpec,
    )
