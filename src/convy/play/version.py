"""Which build of the agent answered (see docs/agents.md): agent-version-url asked (GET, with the agent's
headers and TLS) before anything is played, and — with expect-agent-version — polled every 10 s
until the build it reports contains the expected text, for at most agent-version-wait seconds, on a
clock (the real one, or a fake in tests)."""

from __future__ import annotations

import ssl

import httpx
import msgspec

from convy.errors import ConfigurationError, ConvyError
from convy.play.busy import Clock
from convy.play.template import Path, PathMissing

MOST = 200
"""Characters of the build kept."""
EVERY = 10.0
"""Seconds between two polls."""


class Unread(ConvyError):
    """The version URL did not answer with a build (an error status, no connection)."""


class AgentVersion(msgspec.Struct, frozen=True, kw_only=True):
    """agent-version-url and its companions; `headers` and `verify` are the agent's."""

    url: str
    path: str = ""
    expect: str = ""
    wait: float = 600.0
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    verify: ssl.SSLContext | bool = True
    every: float = EVERY

    async def build(self, clock: Clock) -> str:
        """The build the agent reports; ConfigurationError (exit 2, before any scenario) when the URL
        cannot be read, or the expected build did not show within `wait` seconds."""
        started = clock.now()
        async with httpx.AsyncClient(verify=self.verify, timeout=30.0) as client:
            while True:
                try:
                    build = await self.read(client)
                except Unread as error:
                    if not self.expect:
                        raise ConfigurationError("agent-version-url", str(error)) from None
                    build, last = "", str(error)
                else:
                    last = f"it reported {build!r}"
                    if not self.expect or self.expect in build:
                        return build
                if clock.now() - started + self.every > self.wait:
                    raise ConfigurationError(
                        "expect-agent-version",
                        f"agent-version-url did not report a build containing {self.expect!r} within "
                        f"agent-version-wait {self.wait:g} s; the last time {last}",
                    )
                await clock.sleep(self.every)

    async def read(self, client: httpx.AsyncClient) -> str:
        shown = str(httpx.URL(self.url).copy_with(query=None, fragment=None, userinfo=b""))
        try:
            response = await client.get(self.url, headers=self.headers)
        except httpx.HTTPError as error:
            raise Unread(f"GET {shown} failed ({type(error).__name__})") from None
        if not response.is_success:
            raise Unread(f"GET {shown} answered HTTP {response.status_code}")
        body = response.text.strip()
        if self.path:
            try:
                found = Path(self.path).found(msgspec.json.decode(response.content))
            except msgspec.DecodeError:
                found = body
            except PathMissing as missing:
                raise Unread(f"the answer to GET {shown} has {missing}") from None
            body = found if isinstance(found, str) else msgspec.json.encode(found).decode()
        return " ".join(body.split())[:MOST]
