"""An A2A agent's card (DESIGN §14.1): what the card at `<origin>/.well-known/agent-card.json` says
about the version to speak and the build that answers, asked for once before the run with the
agent's headers and OAuth2 bearer. No card (an error status, no connection, not JSON) is the empty
card: the run goes on, 1.0 first."""

from __future__ import annotations

import ssl
from collections.abc import Callable
from typing import Literal

import httpx
import msgspec

from convy.play.version import MOST
from convy.play.wire.oauth import AccessToken
from convy.play.wire.reading import Limited
from convy.play.wire.spec import AgentSpec

CARD_PATH = "/.well-known/agent-card.json"
CARD_BYTES = 1024 * 1024
"""The largest card read; a bigger one is no card."""

Number = Literal["1.0", "0.3", ""]
"""An A2A version convy speaks, or "" (not known)."""


class Card(msgspec.Struct, frozen=True):
    """An agent card's JSON (None: no card)."""

    data: object = None

    @property
    def number(self) -> Number:
        """The version to speak: 1.0 when an interface of `supportedInterfaces` (JSON-RPC, or of no
        binding said) has protocolVersion 1.x — even when the legacy top-level `protocolVersion`
        says 0.3, as a 1.x SDK serving both writes it; 0.3 when only 0.x versions are named; ""
        when the card names none."""
        if not isinstance(self.data, dict):
            return ""
        interfaces = self.data.get("supportedInterfaces")
        named = [Interface(each).version for each in interfaces] if isinstance(interfaces, list) else []
        legacy = self.data.get("protocolVersion")
        majors = [text.strip().partition(".")[0] for text in (*named, legacy) if isinstance(text, str)]
        if "1" in majors:
            return "1.0"
        return "0.3" if "0" in majors else ""

    @property
    def build(self) -> str:
        """The agent's build: its `name` and `version`, one line of at most 200 characters."""
        if not isinstance(self.data, dict):
            return ""
        said = [self.data.get(key) for key in ("name", "version")]
        return " ".join(" ".join(text for text in said if isinstance(text, str)).split())[:MOST]


class Interface(msgspec.Struct, frozen=True):
    """An entry of a card's `supportedInterfaces`."""

    value: object

    @property
    def version(self) -> str:
        """Its protocolVersion when it is served over JSON-RPC (or names no binding), else ""."""
        if not isinstance(self.value, dict):
            return ""
        binding, version = self.value.get("protocolBinding"), self.value.get("protocolVersion")
        jsonrpc = binding is None or (isinstance(binding, str) and binding.strip().upper() in ("", "JSONRPC"))
        return version if jsonrpc and isinstance(version, str) else ""


class CardRead(msgspec.Struct, frozen=True):
    """The card of the agent `spec` describes, at its URL's origin."""

    spec: AgentSpec

    @property
    def url(self) -> httpx.URL:
        return httpx.URL(self.spec.url).copy_with(path=CARD_PATH, query=None, fragment=None)

    async def card(
        self, client: Callable[[], httpx.AsyncClient], headers: httpx.Headers, tokens: AccessToken | None
    ) -> Card:
        """The card, asked with `headers`, the agent file's own headers and the OAuth2 bearer; the
        empty Card when none is served."""
        sent = headers.copy()
        sent["Accept"] = "application/json"
        sent.update({name: value.replace("$session", "") for name, value in self.spec.headers.items()})
        if tokens is not None:
            sent["Authorization"] = f"Bearer {await tokens.token()}"
        try:
            async with client() as http, http.stream("GET", self.url, headers=sent) as response:
                if response.status_code != 200:
                    return Card()
                content = await Limited(CARD_BYTES).read(response)
        except (httpx.HTTPError, ssl.SSLError, OSError):
            return Card()
        try:
            return Card(msgspec.json.decode(content)) if content is not None else Card()
        except msgspec.DecodeError:
            return Card()
