"""The agent's own session (see docs/agents.md): the requests that start and end it and how their answers
are read — the id from the start's JSON at a path or from a response header; a start that gives no
id fails the attempt (`session_failed`, with the service's own words); an end that fails is only a
warning."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import msgspec

from convy.play.agent import AgentFailure
from convy.play.errorbody import ErrorBody, Masked
from convy.play.placeholders import Names, Placeholders
from convy.play.template import Body
from convy.play.wire.encoding import Encoded
from convy.play.wire.reading import Found
from convy.play.wire.spec import Endpoint, FromHeader, SessionSpec, Shown


class Received(msgspec.Struct, frozen=True):
    """A whole answer: its status, headers and body."""

    status: int
    headers: httpx.Headers
    content: bytes


class Quoted(msgspec.Struct, frozen=True):
    """A value as it goes into a URL: percent-encoded, `/` included."""

    def text(self, value: str) -> str:
        return quote(value, safe="")


class SessionCalls(msgspec.Struct, frozen=True):
    """The session requests of one conversation (`key`, its `$conversation`), whose session id is
    `session` once known; `masked` hides the agent's secrets in what is shown."""

    spec: SessionSpec
    key: str
    session: str
    masked: Masked

    @property
    def placeholders(self) -> Placeholders:
        return Placeholders(conversation=self.key, session=self.session)

    def url(self, endpoint: Endpoint) -> str:
        """The endpoint's URL with its placeholders (`$conversation`, `$session`) filled in."""
        return self.placeholders.text(endpoint.url, quoted=Quoted().text)

    def request(self, endpoint: Endpoint) -> tuple[str, str, Encoded | None]:
        """The method, URL (placeholders filled in) and body of a session request."""
        url = self.url(endpoint)
        if endpoint.body is None:
            return endpoint.method.upper(), url, None
        body = Body(endpoint.body).filled(self.placeholders)
        return endpoint.method.upper(), url, Encoded(body, endpoint.format)

    def needless(self, endpoint: Endpoint) -> bool:
        """Whether the request needs a session id that was never known (nothing to end)."""
        return not self.session and "session" in Names(endpoint.url).used()

    def start_request(self) -> tuple[str, str, Encoded | None]:
        return self.request(self.spec.start)

    def end_request(self) -> tuple[str, str, Encoded | None]:
        return self.request(self.spec.end)

    def started(self, received: Received) -> str:
        """The session id the start's answer gives; AgentFailure("session_failed") when none."""
        shown = Shown(self.url(self.spec.start)).text
        where = self.spec.start.id
        if isinstance(where, FromHeader):
            value = str(received.headers.get(where.header, "")).strip()
            if not value:
                raise AgentFailure(
                    "session_failed", f"the session start at {shown} answered without a {where.header} header"
                )
            return value
        try:
            data = msgspec.json.decode(received.content)
        except msgspec.DecodeError:
            said = ErrorBody(received.content, self.masked).message()
            raise AgentFailure(
                "session_failed", f"the session start at {shown} answered without JSON: {said}", message=said
            ) from None
        found = Found(where).value(data)
        if isinstance(found, bool) or not isinstance(found, str | int) or not str(found):
            raise AgentFailure("session_failed", f"the session start at {shown} gave no id at {where!r}")
        return str(found)

    def ended(self, received: Received) -> str:
        """What went wrong ending the session ("" nothing: any 2xx answer ends it)."""
        if 200 <= received.status < 300:
            return ""
        shown = Shown(self.url(self.spec.end)).text
        said = ErrorBody(received.content, self.masked).message()
        return f"ending the session at {shown} failed: HTTP {received.status}" + (f": {said}" if said else "")
