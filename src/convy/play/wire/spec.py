"""What an agent file (agents/<name>.yaml) declares — where the agent is, which protocol it speaks,
how it streams, its session (started, read from the first answer, ended), its OAuth2 client
credentials, where its answers report tokens — and the checks made on it before any request: header
names, `${VAR}` read from the environment, a URL as errors show it."""

from __future__ import annotations

import base64
import pathlib
import re
import ssl
from collections.abc import Mapping
from typing import Literal

import httpx
import msgspec

from convy.data import Declared
from convy.errors import ConfigurationError
from convy.play.placeholders import Names
from convy.play.template import Body, Path
from convy.play.wire.preset import PresetFile
from convy.play.wire.tls import Tls
from convy.play.wire.tokens import OPENAI_TOKENS, TokenPaths

VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
"""An HTTP token (RFC 9110): what a header name must be."""

Protocol = Literal[
    "openai-chat", "openai-responses", "a2a", "ag-ui", "vercel-ai", "template", "langgraph", "adk"
]
PRESETS = ("langgraph", "adk")
"""The framework servers whose requests convy makes itself: the file names only the base URL."""
STREAMED_ONLY = ("ag-ui", "vercel-ai")
"""The protocols whose answers are always event streams (server-sent events)."""
Streaming = Literal["none", "sse", "ndjson", "text"]
Format = Literal["json", "form"]
"""How a body is sent: JSON, or form-encoded (application/x-www-form-urlencoded)."""
Scalar = str | int | float | bool | None
A2aNumber = Literal["1.0", "0.3", ""]
"""An A2A version convy speaks, or "" (not known)."""
A2A_VERSIONS: dict[str, A2aNumber] = {"0.3": "0.3", "1.0": "1.0", "1": "1.0"}
"""The agent file's `version` (YAML reads `0.3` and `1.0` as numbers) and the version it names."""


class FromHeader(Declared, frozen=True, kw_only=True):
    """A session id read from a response header (`id: {header: X-Session-Id}`)."""

    header: str


class Endpoint(Declared, frozen=True, kw_only=True):
    """A request of a session's own: `url` (with `${VAR}`, and `$session` once known), `method`
    (POST unless given), a `body` template (`$conversation`, `$session`) sent in its `format`, and —
    for a start — where its answer gives the session `id`: a dotted path into its JSON, or
    `{header: NAME}`. An empty url means no such request."""

    url: str = ""
    method: str = "POST"
    body: object = None
    format: Format = "json"
    id: str | FromHeader = ""

    def __post_init__(self) -> None:
        if not TOKEN.fullmatch(self.method):
            raise ValueError(f"method {self.method!r} is not an HTTP method")
        if self.body is not None:
            BodyCheck(self.body, self.format).check()
        if isinstance(self.id, str) and self.id:
            Path(self.id)

    @property
    def given(self) -> bool:
        return bool(self.url.strip())


class BodyCheck(msgspec.Struct, frozen=True):
    """A body template as an agent file gives it, checked before any request."""

    body: object
    format: Format

    def check(self) -> None:
        """ValueError saying what is wrong with the body, if anything."""
        problem = Body(self.body).problem()
        if problem:
            raise ValueError(f"`body` {problem}")
        if self.format == "form" and not isinstance(self.body, dict):
            raise ValueError("`body` must be a mapping with `format: form`, which sends it as form fields")


class SessionSpec(Declared, frozen=True, kw_only=True):
    """The agent's own session: `start` requested when an attempt begins (its answer gives the id),
    or without it `id`, the path of the id in the first turn's answer; `end` requested after the
    attempt. `$session` stands for the id in the turns' url, headers and body."""

    start: Endpoint = Endpoint()
    end: Endpoint = Endpoint()
    id: str = ""

    def __post_init__(self) -> None:
        if self.start.given and not self.start.id:
            raise ValueError(
                "session.start needs `id`: the path of the session id in its answer, or {header: NAME}"
            )
        if self.start.given and self.id:
            raise ValueError(
                "session.id reads the id from the first answer: leave it out when session.start gives it"
            )
        if self.id:
            Path(self.id)

    @property
    def given(self) -> bool:
        return self.start.given or bool(self.id) or self.end.given


class OAuth2(Declared, frozen=True, kw_only=True, rename="kebab"):
    """OAuth2 client credentials (RFC 6749 §4.4): a token asked of `token_url` for the whole run."""

    token_url: str = ""
    client_id: str = ""
    client_secret: str = ""
    scope: str = ""
    audience: str = ""

    @property
    def given(self) -> bool:
        return bool(self.token_url.strip())


class Auth(Declared, frozen=True, kw_only=True):
    """How the agent's requests are authorised beyond its headers."""

    oauth2: OAuth2 = OAuth2()

    def __post_init__(self) -> None:
        if self.oauth2.given and not (self.oauth2.client_id and self.oauth2.client_secret):
            raise ValueError("auth.oauth2 needs client-id and client-secret")


class AgentSpec(Declared, frozen=True, kw_only=True):
    """A declarative HTTP agent, as agents/<name>.yaml declares it: the `url` it is POSTed to, its
    `headers`, the `protocol` it speaks, whether it `stream`s its answers, and for the template
    protocol the JSON `body` template (see Body), the dotted path of the `answer` in what it
    returns (or of each streamed `delta`), where it reports `tokens` and its `steps`; for A2A the
    `version` to speak and the URL of its `card`. `${VAR}` in its URLs, header values and
    credentials is read from the environment (`resolved`). Without body and answer the agent is
    taken to be OpenAI chat-completions compatible."""

    url: str
    headers: dict[str, str] = {}
    protocol: Protocol | Literal[""] = ""
    stream: Streaming = "none"
    body: object = None
    """None: not given (the protocol's own)."""
    format: Format = "json"
    answer: str = ""
    delta: str = ""
    event: str = ""
    where: dict[str, Scalar] = {}
    """Only the streamed events whose data has each of these values at these paths carry deltas."""
    join: Literal["append", "last"] = "append"
    model: str = ""
    tokens: TokenPaths = OPENAI_TOKENS
    steps: str = ""
    tls: Tls = Tls()
    session: SessionSpec = SessionSpec()
    auth: Auth = Auth()
    version: str | float = ""
    """A2A: the version to speak, 0.3 or 1.0, over what the card names ("": the card's)."""
    card: str = ""
    """A2A: the agent card's URL ("": looked for beside `url`'s path, then at its origin)."""
    assistant: str = "agent"
    """LangGraph's: the assistant (graph) id each run asks for."""
    app: str = ""
    """ADK's: the app its sessions and runs belong to, and the `user` they are made for."""
    user: str = "convy"

    def __post_init__(self) -> None:
        if not self.url.strip():
            raise ValueError("url must not be empty")
        if (self.version != "" or self.card) and self.spoken != "a2a":
            raise ValueError("version and card belong to the a2a protocol")
        if self.version != "" and not self.speaks:
            raise ValueError("version must be 0.3 or 1.0, the A2A version the agent speaks")
        for path in (self.answer, self.delta, self.steps, *self.where):
            if path:
                Path(path)
        if self.body is not None:
            BodyCheck(self.body, self.format).check()
        if self.format == "form" and self.spoken != "template":
            raise ValueError(f"`format` form belongs to the template protocol, not {self.spoken}")
        if "session" in Names(self.url).used() and not self.session.start.given:
            raise ValueError(
                "`url` uses $session, which only session.start gives before the first turn: "
                "without it a turn's URL would have no session in it (send the id in the body or a "
                "header instead, where it is left out until known)"
            )
        spoken = self.spoken
        if spoken in ("a2a", "openai-responses", *PRESETS, *STREAMED_ONLY):
            given = [
                key
                for key, value in (("body", self.body), ("answer", self.answer), ("delta", self.delta))
                if value
            ]
            if given:
                raise ValueError(f"{', '.join(given)} belong to the template protocol, not {spoken}")
            if self.stream not in ("none", "sse"):
                raise ValueError(f"{spoken} streams as sse only")
        if spoken == "openai-chat" and self.stream not in ("none", "sse"):
            raise ValueError("openai-chat streams as sse only")
        if spoken == "template" and self.stream in ("sse", "ndjson") and not self.delta:
            raise ValueError(f"stream: {self.stream} needs `delta`, the path of the text in each event")

    @property
    def streamed(self) -> Streaming:
        """How its answers stream: sse for the protocols that always stream, else `stream`."""
        return "sse" if self.spoken in STREAMED_ONLY else self.stream

    @property
    def spoken(self) -> Protocol:
        """The protocol: as given, else template when body or answer is given, else openai-chat."""
        if self.protocol:
            return self.protocol
        return "template" if self.body is not None or self.answer else "openai-chat"

    @property
    def speaks(self) -> A2aNumber:
        """The A2A version the agent file names ("" none, or not one convy speaks)."""
        version = self.version
        text = f"{version:g}" if isinstance(version, float) else str(version).strip()
        return A2A_VERSIONS.get(text, "")

    def __repr__(self) -> str:
        return f"AgentSpec(url={Shown(self.url).text!r}, headers={sorted(self.headers)!r})"

    def names(self, header: str) -> bool:
        """Whether the agent file sets the header `header` itself (in any case)."""
        return any(name.lower() == header.lower() for name in self.headers)

    def verify(self, base: pathlib.Path) -> ssl.SSLContext | bool:
        """How the agent's connections check TLS: its Tls context when any of its URLs (the turns',
        a session's, the token endpoint's) is https; nothing to check (and no CA bundle to load)
        when every one is plain http."""
        urls = (self.url, self.session.start.url, self.session.end.url, self.auth.oauth2.token_url, self.card)
        return False if all(url.startswith("http://") or not url for url in urls) else self.tls.context(base)

    def secrets(self) -> tuple[str, ...]:
        """The values never to show: header values (and their tokens after `Bearer `), the OAuth2
        client secret, and the password of a URL's `user:password@` with the Basic credentials made
        of it."""
        values = tuple(self.headers.values())
        bearers = tuple(value.removeprefix("Bearer ").strip() for value in values)
        oauth = (self.auth.oauth2.client_secret,) if self.auth.oauth2.given else ()
        return (*values, *bearers, *oauth, *Credentials(self.url).secrets())

    def resolved(self, environ: Mapping[str, str], where: str) -> AgentSpec:
        """The same agent with every `${VAR}` of its URLs, header values and credentials read from
        `environ`; a variable that is not set, or a URL that is then not http(s), is a
        ConfigurationError at `where` (never showing a value)."""
        variables = Environment(environ, where)
        if self.spoken in PRESETS:
            given = {"assistant": self.assistant, "app": self.app, "user": self.user}
            PresetFile(spoken=self.spoken, url=self.url, session=self.session.given, **given).check(where)
        url = Address(variables.filled(self.url), "url").checked(where)
        headers = {name: variables.filled(value) for name, value in self.headers.items()}
        for name in headers:
            if not HeaderName(name).valid():
                raise ConfigurationError(where, HeaderName(name).problem())
        for name, value in headers.items():
            if "\r" in value or "\n" in value:
                raise ConfigurationError(where, f"the header {name} holds a line break")
        session = self.session
        for key in ("start", "end"):
            endpoint: Endpoint = getattr(session, key)
            if endpoint.given:
                filled = Address(variables.filled(endpoint.url), f"session.{key}.url").checked(where)
                session = msgspec.structs.replace(
                    session, **{key: msgspec.structs.replace(endpoint, url=filled)}
                )
        auth = self.auth
        if auth.oauth2.given:
            oauth = auth.oauth2
            auth = Auth(
                oauth2=OAuth2(
                    token_url=Address(variables.filled(oauth.token_url), "auth.oauth2.token-url").checked(
                        where
                    ),
                    client_id=variables.filled(oauth.client_id),
                    client_secret=variables.filled(oauth.client_secret),
                    scope=variables.filled(oauth.scope),
                    audience=variables.filled(oauth.audience),
                )
            )
        card = Address(variables.filled(self.card), "card").checked(where) if self.card else ""
        return msgspec.structs.replace(
            self,
            url=url,
            headers=headers,
            session=session,
            auth=auth,
            model=variables.filled(self.model),
            card=card,
        )


class Credentials(msgspec.Struct, frozen=True):
    """The `user:password@` of a URL, which httpx sends as HTTP Basic credentials."""

    url: str

    def secrets(self) -> tuple[str, ...]:
        """The password, `user:password` and its Basic (base64) form; () without a password."""
        try:
            parsed = httpx.URL(self.url)
        except httpx.InvalidURL:
            return ()
        if not parsed.password:
            return ()
        pair = f"{parsed.username}:{parsed.password}"
        return (parsed.password, pair, base64.b64encode(pair.encode()).decode())


class Address(msgspec.Struct, frozen=True):
    """A URL of an agent file (`what`: url, session.start.url, ...) with its variables filled in."""

    url: str
    what: str

    def checked(self, where: str) -> str:
        """The URL; ConfigurationError at `where` when it is not an http(s) address."""
        try:
            parsed = httpx.URL(self.url.replace("$session", "session"))
        except httpx.InvalidURL:
            raise ConfigurationError(
                where, f"{self.what} is not a valid URL with its variables filled in"
            ) from None
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise ConfigurationError(where, f"{self.what} must be an http:// or https:// address")
        return self.url


class HeaderName(msgspec.Struct, frozen=True):
    """A header's name as given, checked to be an HTTP token before any request."""

    name: str

    def valid(self) -> bool:
        return TOKEN.fullmatch(self.name) is not None

    def problem(self) -> str:
        """Why the name cannot be sent (the name not shown: headers are secret)."""
        return "a header name is not an HTTP token (letters, digits and !#$%&'*+-.^_`|~ only)"


class Environment(msgspec.Struct, frozen=True):
    """The variables `${VAR}` is read from, for the file or setting `where`."""

    values: Mapping[str, str]
    where: str

    def filled(self, text: str) -> str:
        """`text` with each `${VAR}` replaced by its value."""
        return VARIABLE.sub(self.value, text)

    def value(self, found: re.Match[str]) -> str:
        name = found.group(1)
        if name not in self.values:
            raise ConfigurationError(self.where, f"variable {name} is not set")
        return self.values[name]


class Shown(msgspec.Struct, frozen=True):
    """A URL as errors show it: without its query, fragment or user info, which may hold keys."""

    url: str

    @property
    def text(self) -> str:
        try:
            return str(httpx.URL(self.url).copy_with(query=None, fragment=None, userinfo=b""))
        except httpx.InvalidURL:
            return "the agent's URL"
