"""An A2A agent's card (see docs/agents.md): the version to speak and the build that answers, asked for
once before the run with the agent's headers and bearer, at the agent file's `card` URL, else beside
the agent URL's path and each path above it (`.well-known/agent-card.json`, the older `agent.json`).
None found is the empty card (1.0 first); a `card` URL that gives none is a configuration error."""

from __future__ import annotations

import ssl
from collections.abc import Callable

import httpx
import msgspec

from convy.errors import ConfigurationError
from convy.play.version import MOST
from convy.play.wire.oauth import AccessToken
from convy.play.wire.reading import Limited
from convy.play.wire.served import AskedAbout
from convy.play.wire.spec import A2aNumber, AgentSpec, Shown

CARD_NAMES = ("agent-card.json", "agent.json")
"""The card's names under `.well-known/`: the current one, then the one before A2A 0.3."""
CARD_BYTES = 1024 * 1024
"""The largest card read; a bigger one is no card."""

Number = A2aNumber


class Card(msgspec.Struct, frozen=True):
    """An agent card's JSON (None: no card)."""

    data: object = None

    @property
    def found(self) -> bool:
        """Whether it is a card: a JSON object with a `name` (a page that answers any path is not)."""
        return isinstance(self.data, dict) and isinstance(self.data.get("name"), str)

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
    """The card of the agent `spec` describes."""

    spec: AgentSpec

    @property
    def urls(self) -> list[httpx.URL]:
        """Where the card is looked for, in order: the `card` URL alone when given; else beside the
        agent URL's path and each path above it, the origin last, each name of CARD_NAMES."""
        if self.spec.card:
            return [httpx.URL(self.spec.card)]
        url = httpx.URL(self.spec.url.replace("$session", "")).copy_with(query=None, fragment=None)
        path = url.path.rstrip("/")
        paths = [path]
        while path:
            path = path.rpartition("/")[0]
            paths.append(path)
        return [url.copy_with(path=f"{each}/.well-known/{name}") for each in paths for name in CARD_NAMES]

    async def card(
        self, client: Callable[[], httpx.AsyncClient], headers: httpx.Headers, tokens: AccessToken | None
    ) -> Card:
        """The first card found, asked as AskedAbout says; the empty Card when none is served;
        ConfigurationError when the agent file's `card` URL gives none."""
        sent = await AskedAbout(self.spec).headers(headers, tokens)
        why = ""
        async with client() as http:
            for url in self.urls:
                card, why = await self.read(http, url, sent)
                if card.found:
                    return card
        if self.spec.card:
            shown = Shown(self.spec.card).text
            raise ConfigurationError("card", f"the agent card at {shown} could not be read: {why}")
        return Card()

    async def read(self, http: httpx.AsyncClient, url: httpx.URL, headers: httpx.Headers) -> tuple[Card, str]:
        """The card at `url`, or the empty Card and why there is none."""
        try:
            async with http.stream("GET", url, headers=headers) as response:
                if response.status_code != 200:
                    return Card(), f"HTTP {response.status_code}"
                content = await Limited(CARD_BYTES).read(response)
        except (httpx.HTTPError, ssl.SSLError, OSError) as error:
            return Card(), f"no answer ({type(error).__name__})"
        if content is None:
            return Card(), "it is over 1 MiB"
        try:
            card = Card(msgspec.json.decode(content))
        except msgspec.DecodeError:
            return Card(), "it is not JSON"
        return card, "" if card.found else "it is not an agent card (no name)"
