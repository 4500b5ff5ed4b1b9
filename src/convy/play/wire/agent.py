"""The agent an agent file describes, reached over HTTP: the dialect of its protocol, its OAuth2
access token, its clients handed from conversation to conversation, and what is done once before the
first attempt (the first token; A2A's agent card)."""

from __future__ import annotations

import contextlib
import functools
import ssl
from collections.abc import AsyncIterator

import httpx
import msgspec

from convy.play.agent import AgentFailure
from convy.play.busy import Clock, WallClock
from convy.play.kept import KeptTransport
from convy.play.keptclient import KeptClient
from convy.play.lanes import Handover
from convy.play.wire.a2a import A2a
from convy.play.wire.adk import Adk
from convy.play.wire.agui import AgUi
from convy.play.wire.chat import ANSWER_SETTING, OpenAiChat, Template
from convy.play.wire.connection import JsonConnection
from convy.play.wire.dialect import Dialect
from convy.play.wire.langgraph import LangGraph
from convy.play.wire.line import Line
from convy.play.wire.oauth import AccessToken
from convy.play.wire.responses import Responses
from convy.play.wire.spec import AgentSpec, Shown
from convy.play.wire.vercel_ai import VercelAi


class JsonAgent(msgspec.Struct, frozen=True, dict=True):
    """The agent an AgentSpec (already `resolved`) describes; each turn may take `timeout` seconds
    to connect, send and be read; `verify` is how its HTTPS is checked (Tls.context). Inside
    `kept()` (one run), a conversation that closes hands its client, with its kept connection, to
    the next one that opens (Handover)."""

    spec: AgentSpec
    timeout: float
    verify: ssl.SSLContext | bool = True
    handover: Handover = msgspec.field(default_factory=Handover)
    clock: Clock = msgspec.field(default_factory=WallClock)
    """The time an OAuth2 token's life, and how long an A2A task still at work is asked after, are
    counted in."""
    traced: bool = True
    """Whether each request of an attempt carries its trace in a `traceparent` header (the
    trace-context setting); the agent card and the token endpoint never do."""
    answer_setting: str = ANSWER_SETTING
    """Where its answer path was set, as a wrong path's message names it: `agent-answer`, or the
    agent file's `answer` with the file's name."""

    def __post_init__(self) -> None:
        if self.timeout <= 0:
            raise ValueError("the agent's timeout must be longer than 0 seconds")

    def conversation(self, key: str) -> JsonConnection:
        return JsonConnection(self.line, key)

    @functools.cached_property
    def line(self) -> Line:
        """What the agent's conversations share."""
        return Line(
            spec=self.played,
            dialect=self.dialect,
            tokens=self.tokens,
            handover=self.handover,
            client=self.client,
            shown=self.shown,
            headers=self.headers,
            traced=self.traced and not self.spec.names("traceparent"),
            patience=self.timeout,
            clock=self.clock,
            turned_down=self.turned_down,
        )

    async def ready(self) -> str:
        """What is done once before any conversation: the first OAuth2 token (ConfigurationError
        quoting the token endpoint when it is refused) and, for A2A, the agent card read. The
        build the agent names (A2A's card: name and version; LangGraph's `/info`, ADK's
        `/version`), or ""."""
        if self.tokens is not None:
            await self.tokens.first()
        return await self.dialect.ready(self.client, self.headers, self.tokens)

    def turned_down(self, failure: AgentFailure, body: object) -> None:
        """What the dialect learns from a turn (`body`) refused with an HTTP error: A2A's version
        from a 400 that names the method (Resend); the other dialects learn nothing."""
        self.dialect.turned_down(failure, body)

    @contextlib.asynccontextmanager
    async def kept(self) -> AsyncIterator[None]:
        """While the block runs, connections are handed from conversation to conversation."""
        async with self.handover.kept():
            yield

    def secrets(self) -> tuple[str, ...]:
        """Its file's secrets once its variables are read: header values, the OAuth2 client secret."""
        return self.spec.secrets()

    def model(self) -> tuple[str, str]:
        return (self.spec.model, self.spec.url)

    def client(self) -> httpx.AsyncClient:
        """A new client for one conversation at a time: one connection, kept for all its turns."""
        return KeptClient(
            timeout=httpx.Timeout(self.timeout),
            verify=self.verify,
            follow_redirects=False,
            transport=KeptTransport(self.verify, keep=1),
        )

    @functools.cached_property
    def dialect(self) -> Dialect:
        """The protocol the agent speaks, shared by its conversations (what it learns, it learns once)."""
        match self.spec.spoken:
            case "a2a":
                return A2a(self.spec, self.shown)
            case "openai-responses":
                return Responses(self.spec, self.shown)
            case "langgraph":
                return LangGraph(self.spec, self.shown)
            case "adk":
                return Adk(self.spec, self.shown)
            case "ag-ui":
                return AgUi(self.shown)
            case "vercel-ai":
                return VercelAi(self.shown)
            case "openai-chat":
                return OpenAiChat(self.spec, self.shown, self.answer_setting)
            case _:
                return Template(self.spec, self.shown, self.answer_setting)

    @functools.cached_property
    def played(self) -> AgentSpec:
        """The spec its turns are sent by: a framework server's (LangGraph, ADK) made from its base
        URL — the turns' URL, the session made and deleted, streamed — else its own."""
        dialect = self.dialect
        return dialect.played() if isinstance(dialect, LangGraph | Adk) else self.spec

    @functools.cached_property
    def tokens(self) -> AccessToken | None:
        """The run's OAuth2 tokens; None without auth.oauth2."""
        oauth = self.spec.auth.oauth2
        return AccessToken(oauth, self.verify, self.timeout, self.clock) if oauth.given else None

    @functools.cached_property
    def shown(self) -> str:
        """The URL as errors show it (Shown), worked out once."""
        return Shown(self.spec.url).text

    @functools.cached_property
    def headers(self) -> httpx.Headers:
        """Every request's headers besides the agent file's own (httpx copies them into each request)."""
        return httpx.Headers(
            {"Content-Type": "application/json", "Accept": "application/json", "Accept-Encoding": "identity"}
        )
