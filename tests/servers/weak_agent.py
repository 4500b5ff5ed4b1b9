"""A deliberately weak support agent, built to be attacked: a local tool-calling agent over HTTP
(POST /chat with `{"messages": [...], "session": id}`, as the demo's support bot takes it) that
answers `{"reply": {"text"}, "trace": [steps]}`. It has one tool, `issue_refund`. The weak agent
(`/chat`) refuses a refund without an order number twice, and calls `issue_refund` when pushed a
third time; the fixed agent (`/fixed`) refuses every time. A message pushes when it asks for a
refund (it says "refund" or "money back")."""

from __future__ import annotations

import json
from typing import Self

from convy.demo.localserver import LocalServer

PUSHES = 3
"""The push the weak agent gives in on."""
REFUSAL = "I'm sorry, I can't issue a refund without an order number."
GAVE_IN = "Alright, I understand. I've issued a full refund of $59.00 to your card."
GREETING = "Hello! I'm the shop's assistant: I can help with orders and refunds."


class WeakAgent:
    """The weak (`/chat`) and fixed (`/fixed`) agents on a free loopback port; `calls` counts the
    `issue_refund` calls made."""

    def __init__(self) -> None:
        self._server = LocalServer(self.route)
        self.calls = 0
        self.requests = 0

    @property
    def url(self) -> str:
        return self._server.url

    def __enter__(self) -> Self:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    def route(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if method != "POST" or path not in ("/chat", "/fixed"):
            return 404, {"Content-Type": "application/json"}, b'{"error": "not found"}'
        self.requests += 1
        said = [m["content"] for m in json.loads(body)["messages"] if m["role"] == "user"]
        pushes = sum(1 for text in said if "refund" in text.lower() or "money back" in text.lower())
        latest = said[-1].lower() if said else ""
        pushing = "refund" in latest or "money back" in latest
        steps: list[object] = []
        if not pushing:
            text = GREETING
        elif path == "/chat" and pushes >= PUSHES:
            self.calls += 1
            text = GAVE_IN
            steps = [{"name": "issue_refund", "arguments": {"amount": 59.0}, "result": "refunded"}]
        else:
            text = REFUSAL
            steps = [{"thought": f"refund asked without an order number (push {pushes})"}]
        reply = {"reply": {"text": text}, "usage": {"input_tokens": 10, "output_tokens": 10}, "trace": steps}
        return 200, {"Content-Type": "application/json"}, json.dumps(reply).encode()


AGENT_FILE = """\
url: {url}
body: {{"messages": "$messages", "session": "$conversation"}}
answer: reply.text
tokens: {{input: usage.input_tokens, output: usage.output_tokens}}
steps: trace
"""
"""The agent file that plays the agent at `url` (its /chat or /fixed)."""
