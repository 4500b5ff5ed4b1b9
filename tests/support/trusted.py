"""A scenario that says hello, and a model that decides it held."""

from __future__ import annotations

HELLO = "user: Say hello.\nopening: hi\nclaims: [The agent answers.]\n"


def decided(request: dict[str, object]) -> str:
    return '{"decisions": [{"pass": true, "reason": "ok"}]}' if request.get("response_format") else "FINISHED"
