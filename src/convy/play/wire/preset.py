"""The checks on an agent file of a framework server's protocol (`langgraph`, `adk`), whose
requests convy makes itself from the server's base URL and a few settings, and its first request
refused as by a server of another kind."""

from __future__ import annotations

import msgspec

from convy.errors import ConfigurationError
from convy.play.agent import AgentFailure
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


NO_SERVER = "is no such server"
"""What the failure of a preset's first request answered 404 or 405 says (a setup mistake)."""
SERVERS = {"langgraph": "LangGraph", "adk": "ADK"}
"""The framework servers of the preset protocols, by protocol."""


class WrongServer(msgspec.Struct, frozen=True):
    """The first request of a preset protocol (`spoken`) — its thread or session made — answered
    404 or 405: the URL is no server of that framework, whatever the agent file's session would
    say (it has none); one that made no connection is the url's, as a turn's would be."""

    spoken: str

    def failure(self, failure: AgentFailure) -> AgentFailure:
        """The failure said as the wrong server it means; any other as it is."""
        name = SERVERS.get(self.spoken)
        if name is None:
            return failure
        if not failure.reached:  # no connection: the url to check, the file has no session of its own
            return AgentFailure("connection", failure.detail, reached=False)
        if failure.status not in (404, 405):
            return failure
        return AgentFailure(
            failure.reason,
            f"{failure.detail}: the URL {NO_SERVER} (no {name} server; protocol {self.spoken})",
            status=failure.status,
            message=failure.message,
            reached=failure.reached,
            raw=failure.raw,
        )
