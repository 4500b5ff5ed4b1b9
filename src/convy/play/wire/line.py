"""What every conversation with one declarative HTTP agent shares: its resolved spec, the dialect of
its protocol, its OAuth2 tokens, the clients handed from conversation to conversation, and its URLs
as errors show them."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import msgspec

from convy.play.agent import AgentFailure
from convy.play.busy import Clock, WallClock
from convy.play.errorbody import Masked
from convy.play.lanes import Handover
from convy.play.wire.dialect import Dialect
from convy.play.wire.oauth import AccessToken
from convy.play.wire.spec import AgentSpec, Shown


class Line(msgspec.Struct, frozen=True, kw_only=True):
    """What a JsonAgent's conversations share: its spec (resolved), the Dialect of its protocol,
    its OAuth2 AccessToken (None without), its clients' Handover and how a client is made, its URL as
    errors show it and convy's own request headers."""

    spec: AgentSpec
    dialect: Dialect
    tokens: AccessToken | None
    handover: Handover
    client: Callable[[], httpx.AsyncClient]
    shown: str
    headers: httpx.Headers
    traced: bool = True
    """Whether its requests carry the attempt's `traceparent` (trace-context; off too when the
    agent file sets a `traceparent` header of its own, which then goes as it is)."""
    turned_down: Callable[[AgentFailure, object], None]
    """What the dialect learns from a turn (its JSON body) refused with an HTTP error: Resend when
    it learned how to send it (A2A's version, from a 400 that names the method)."""
    patience: float = 60.0
    """How long after a turn is sent an answer still at work is asked after (the turn timeout)."""
    clock: Clock = msgspec.field(default_factory=WallClock)

    def masked(self) -> Masked:
        """Every value never to show: header values, the OAuth2 secret and the tokens handed out."""
        tokens = self.tokens.secrets() if self.tokens is not None else ()
        return Masked((*self.spec.secrets(), *tokens))

    def shown_url(self, url: str) -> str:
        """Another of the agent's URLs (a turn's with `$session` filled in, a session's) as shown."""
        return self.shown if url == self.spec.url else Shown(url).text
