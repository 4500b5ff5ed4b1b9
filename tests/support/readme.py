"""The docs' agent examples, by name: each fenced block under `<!-- agent-example: NAME -->` of the
README or a page of docs/ (docs/agents.md holds them)."""

from __future__ import annotations

from tests.support.docs import blocks


def examples() -> dict[str, str]:
    return {block.example: block.text for block in blocks("yaml") if block.example}
