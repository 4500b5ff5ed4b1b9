"""The checks on an agent file of a framework server's protocol (`langgraph`, `adk`), whose
requests convy makes itself from the server's base URL and a few settings."""

from __future__ import annotations

import msgspec

from convy.errors import ConfigurationError
from convy.play.placeholders import Names


class PresetFile(msgspec.Struct, frozen=True, kw_only=True):
    """What an agent file of a framework server's protocol (`spoken`) gives: its `url`, whether
    it declares a `session`, and the protocol's settings."""

    spoken: str
    url: str
    session: bool
    assistant: str
    app: str
    user: str

    def check(self, where: str) -> None:
        """ConfigurationError at `where` saying what the file lacks or must leave out."""
        problem = self.problem()
        if problem:
            raise ConfigurationError(where, problem)

    def problem(self) -> str:
        spec = self
        if spec.session:
            return f"protocol {spec.spoken} makes and deletes its own session: leave out `session`"
        if Names(spec.url).used():
            return f"protocol {spec.spoken} takes the server's base URL, without placeholders"
        if spec.spoken == "adk" and not (spec.app.strip() and spec.user.strip()):
            return "protocol adk needs `app`, the name of the agent's app (and a `user`)"
        if spec.spoken == "langgraph" and not spec.assistant.strip():
            return "protocol langgraph needs `assistant`, the graph's id (agent unless set)"
        return ""
