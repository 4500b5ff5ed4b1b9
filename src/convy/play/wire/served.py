"""What an agent framework's own server says about itself, asked once before the first attempt: a
JSON document at a path beside the agent's URL (LangGraph's `/info`, ADK's `/version`), read into
the build that answered."""

from __future__ import annotations

import ssl
from collections.abc import Callable

import httpx
import msgspec

from convy.play.placeholders import Names
from convy.play.wire.oauth import AccessToken
from convy.play.wire.reading import Limited
from convy.play.wire.spec import AgentSpec

MOST_INFO = 256 * 1024
"""The largest document read; a bigger one says nothing."""
MOST_BUILD = 200


class AskedAbout(msgspec.Struct, frozen=True):
    """How a document about the agent `spec` describes (its A2A card, its server's info) is asked
    for, before any turn."""

    spec: AgentSpec

    async def headers(self, headers: httpx.Headers, tokens: AccessToken | None) -> httpx.Headers:
        """`headers`, `Accept: application/json`, the agent file's own headers but those with a
        placeholder (none is known before the first turn: left out, as a turn leaves out an unset
        $session), and the OAuth2 bearer."""
        sent = headers.copy()
        sent["Accept"] = "application/json"
        sent.update({name: value for name, value in self.spec.headers.items() if not Names(value).used()})
        if tokens is not None:
            sent["Authorization"] = f"Bearer {await tokens.token()}"
        return sent


class ServerInfo(msgspec.Struct, frozen=True):
    """The document at `path` under the base URL of the agent `spec` describes."""

    spec: AgentSpec
    path: str

    @property
    def url(self) -> str:
        return self.spec.url.rstrip("/") + self.path

    async def data(
        self, client: Callable[[], httpx.AsyncClient], headers: httpx.Headers, tokens: AccessToken | None
    ) -> object:
        """Its JSON, asked with the agent's headers and bearer; None when it is not served."""
        sent = await AskedAbout(self.spec).headers(headers, tokens)
        try:
            async with client() as http, http.stream("GET", self.url, headers=sent) as response:
                if response.status_code != 200:
                    return None
                content = await Limited(MOST_INFO).read(response)
            return msgspec.json.decode(content) if content is not None else None
        except (httpx.HTTPError, ssl.SSLError, OSError, msgspec.DecodeError):
            return None


class Build(msgspec.Struct, frozen=True):
    """A build named by the words of a document (strings only; others left out), on one line."""

    words: tuple[object, ...]

    def text(self) -> str:
        said = [word.strip() for word in self.words if isinstance(word, str) and word.strip()]
        return " ".join(" ".join(said).split())[:MOST_BUILD]
