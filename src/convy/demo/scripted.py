"""The demo's simulated user and judge, scripted and served as an OpenAI-compatible chat completions
endpoint, so the demo takes the same HTTP path as a real run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import yaml

from convy.data import Declared


class ScriptedUser(Declared, frozen=True, kw_only=True):
    """A simulated user found by a phrase of its brief, and what it answers to each agent answer."""

    persona: str
    says: tuple[str, ...] = ()
    first: str = "Hello."


class ScriptedClaim(Declared, frozen=True, kw_only=True):
    """How the scripted judge decides one claim: a pattern that must (or must not) appear in what
    the agent said, or for a graded claim the first grade whose pattern appears."""

    claim: str
    holds_if: str = ""
    fails_if: str = ""
    grade_if: dict[str, str] = {}
    otherwise: str = ""
    passing: tuple[str, ...] = ()


class Script(Declared, frozen=True, kw_only=True):
    """The demo's script: its users and its claims."""

    users: tuple[ScriptedUser, ...]
    claims: tuple[ScriptedClaim, ...]


class ScriptedModels:
    """A route for LocalServer: POST /chat/completions answers as the simulated user, or as the judge
    when the request asks for a JSON object."""

    def __init__(self, script: Script) -> None:
        self._script = script

    @classmethod
    def bundled(cls) -> ScriptedModels:
        text = (Path(__file__).parent / "script.yaml").read_text(encoding="utf-8")
        return cls(msgspec.convert(yaml.safe_load(text), Script))

    def __call__(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if method != "POST" or not path.endswith("/chat/completions"):
            return 404, {"Content-Type": "application/json"}, b'{"error": {"message": "not found"}}'
        request = json.loads(body)
        messages: list[dict[str, str]] = request["messages"]
        if request.get("response_format", {}).get("type") in ("json_object", "json_schema"):
            content = json.dumps({"decisions": self.decisions("\n".join(m["content"] for m in messages))})
        else:
            content = self.said(messages)
        prompt = sum(len(m["content"]) for m in messages) // 4
        reply = {
            "id": "scripted",
            "object": "chat.completion",
            "model": request.get("model", "scripted"),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": prompt, "completion_tokens": len(content) // 4},
        }
        return 200, {"Content-Type": "application/json"}, json.dumps(reply).encode()

    def said(self, messages: list[dict[str, str]]) -> str:
        """The simulated user's next message: its script's line for the agent's latest answer."""
        brief = messages[0]["content"] if messages else ""
        answers = sum(1 for m in messages if m["role"] == "assistant")
        for user in self._script.users:
            if user.persona in brief:
                if answers == 0:
                    return user.first
                return user.says[answers - 1] if answers - 1 < len(user.says) else "FINISHED"
        return "FINISHED"

    def decisions(self, prompt: str) -> list[dict[str, object]]:
        """One decision per claim found in the prompt, in the order the prompt lists them."""
        agent = "\n".join(line for line in prompt.splitlines() if line.lstrip().startswith("Agent:"))
        found = sorted(
            (prompt.rfind(claim.claim), claim) for claim in self._script.claims if claim.claim in prompt
        )
        return [self.decided(claim, agent) for _, claim in found]

    def decided(self, claim: ScriptedClaim, agent: str) -> dict[str, object]:
        if claim.grade_if:
            grade = next(
                (name for name, pattern in claim.grade_if.items() if re.search(pattern, agent)),
                claim.otherwise,
            )
            return {"pass": grade in claim.passing, "grade": grade, "reason": f"The explanation was {grade}."}
        if claim.holds_if:
            held = re.search(claim.holds_if, agent) is not None
        else:
            held = re.search(claim.fails_if, agent) is None
        reason = "The agent's answers show it." if held else "Nothing the agent said shows it."
        return {"pass": held, "reason": reason}
