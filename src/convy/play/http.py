"""The declarative HTTP agent (agents/<name>.yaml): AgentSpec, what its file holds, with its Tls
and TokenPaths; JsonAgent, the agent it describes, and JsonConnection, one conversation with it over
one kept connection. A refusal (HTTP 429 or 503) is Busy; any other error is an AgentFailure, never
retried here (retries live in Places), so the agent never gets the same message twice; either
carries the agent's own words from its error body (ErrorBody)."""

from __future__ import annotations

import contextlib
import functools
import pathlib
import re
import ssl
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Annotated, Self

import httpx
import msgspec

from convy.data import Declared
from convy.errors import ConfigurationError
from convy.play.agent import AgentFailure, Answer, Call, Message, Step, Thought, Usage
from convy.play.busy import Busy, Hints
from convy.play.errorbody import ErrorBody, Masked
from convy.play.lanes import ONE, Handover
from convy.play.template import Body, Path, PathMissing

VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
MOST_BYTES = 4 * 1024 * 1024
"""The largest answer body read (4 MiB); a longer one is AgentFailure("answer_too_large")."""
REFUSAL_BYTES = 64 * 1024
"""How much of a refusal's body (429, 503) is read, so the connection can be kept for the retry."""


class Tls(Declared, frozen=True, kw_only=True):
    """How the agent's HTTPS is checked: `ca`, a CA bundle to trust instead of the system's; `cert`
    (and `key`, unless the cert file holds it), a client certificate. Paths are relative to the
    project folder."""

    ca: str = ""
    cert: str = ""
    key: str = ""

    def __post_init__(self) -> None:
        if self.key and not self.cert:
            raise ValueError("tls.key needs tls.cert, the client certificate it belongs to")

    def context(self, base: pathlib.Path) -> ssl.SSLContext | bool:
        """The SSL context for the agent's connections, made once and shared by every conversation
        (making one loads the CA bundle, tens of milliseconds); httpx's checks when nothing is
        configured. A file that is missing or unreadable is a ConfigurationError."""
        if not self.ca and not self.cert:
            return httpx.create_ssl_context()
        context = ssl.create_default_context()
        if self.ca:
            ca = TlsFile("tls.ca", self.ca).path(base)
            try:
                context.load_verify_locations(cafile=ca)
            except (ssl.SSLError, OSError, ValueError):
                raise ConfigurationError("tls.ca", f"{self.ca} holds no readable CA certificate") from None
        if self.cert:
            cert = TlsFile("tls.cert", self.cert).path(base)
            key = TlsFile("tls.key", self.key).path(base) if self.key else None
            try:
                context.load_cert_chain(cert, key)
            except (ssl.SSLError, OSError, ValueError):
                raise ConfigurationError(
                    "tls.cert", f"{self.cert} (with its key) is not a readable client certificate"
                ) from None
        return context


class TlsFile(msgspec.Struct, frozen=True):
    """A file named by a setting of Tls (`where`), relative to the project folder."""

    where: str
    name: str

    def path(self, base: pathlib.Path) -> str:
        """The file's full path; ConfigurationError naming it when there is no such file."""
        path = base / self.name
        if not path.is_file():
            raise ConfigurationError(self.where, f"no such file: {self.name}")
        return str(path)


class TokenPaths(Declared, frozen=True, kw_only=True):
    """Where an answer reports its tokens: paths into the answer's JSON; "" when it does not."""

    input: str = ""
    output: str = ""

    def __post_init__(self) -> None:
        for text in (self.input, self.output):
            if text:
                Path(text)

    def usage(self, data: object) -> Usage | None:
        """The tokens the answer reported; a count it does not give is None (unknown), never 0."""
        usage = Usage(input=TokenCount(self.input).found(data), output=TokenCount(self.output).found(data))
        return None if usage.input is None and usage.output is None else usage


class TokenCount(msgspec.Struct, frozen=True):
    """A count of tokens at a path (or "", none) of an answer."""

    path: str

    def found(self, data: object) -> int | None:
        """The count, or None when the path is not set, not there, or not a whole number >= 0."""
        if not self.path:
            return None
        try:
            value = Path(self.path).found(data)
            count: int = msgspec.convert(value, Annotated[int, msgspec.Meta(ge=0)])
        except (PathMissing, msgspec.ValidationError):
            return None
        return count


OPENAI_TOKENS = TokenPaths(input="usage.prompt_tokens", output="usage.completion_tokens")


class AgentSpec(Declared, frozen=True, kw_only=True):
    """A declarative HTTP agent, as agents/<name>.yaml declares it: the `url` it is POSTed to, its
    `headers`, the JSON `body` template (see Body), the dotted path of the `answer` in what it
    returns, where it reports `tokens` and its `steps` (tool calls, thoughts). `${VAR}` in the URL
    and the header values is read from the environment (`resolved`). Without body and answer the
    agent is taken to be OpenAI chat-completions compatible."""

    url: str
    headers: dict[str, str] = {}
    body: object = msgspec.field(default_factory=lambda: {"messages": "$messages"})
    answer: str = "choices.0.message.content"
    tokens: TokenPaths = OPENAI_TOKENS
    steps: str = ""
    tls: Tls = Tls()

    def __post_init__(self) -> None:
        if not self.url.strip():
            raise ValueError("url must not be empty")
        Path(self.answer)
        if self.steps:
            Path(self.steps)

    def __repr__(self) -> str:
        return f"AgentSpec(url={Shown(self.url).text!r}, headers={sorted(self.headers)!r})"

    def verify(self, base: pathlib.Path) -> ssl.SSLContext | bool:
        """How the agent's connections check TLS: its Tls context for an https URL; nothing to check
        (and no CA bundle to load) for plain http."""
        return False if self.url.startswith("http://") else self.tls.context(base)

    def resolved(self, environ: Mapping[str, str], where: str) -> AgentSpec:
        """The same agent with every `${VAR}` of its URL and header values read from `environ`; a
        variable that is not set, or a URL that is then not http(s), is a ConfigurationError at
        `where` (never showing a value)."""
        variables = Environment(environ, where)
        url = variables.filled(self.url)
        headers = {name: variables.filled(value) for name, value in self.headers.items()}
        for name in headers:
            if not HeaderName(name).valid():
                raise ConfigurationError(where, HeaderName(name).problem())
        for name, value in headers.items():
            if "\r" in value or "\n" in value:
                raise ConfigurationError(where, f"the header {name} holds a line break")
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL:
            raise ConfigurationError(where, "url is not a valid URL with its variables filled in") from None
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise ConfigurationError(where, "url must be an http:// or https:// address")
        return msgspec.structs.replace(self, url=url, headers=headers)


TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
"""An HTTP token (RFC 9110): what a header name must be."""


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


class JsonText(msgspec.Struct, frozen=True):
    """A value of an agent's answer as text: a string as it is, null as "", anything else as JSON."""

    value: object

    @property
    def text(self) -> str:
        match self.value:
            case str():
                return self.value
            case None:
                return ""
            case _:
                return msgspec.json.encode(self.value).decode()


class Trace(msgspec.Struct, frozen=True):
    """The steps an answer reported (at the agent's `steps` path): a list whose strings are
    thoughts, whose objects with a `name` or `tool` (or an OpenAI `function`) are tool calls, whose
    objects with a `thought` text are thoughts, and whose other items are thoughts shown as JSON."""

    value: object

    def steps(self) -> tuple[Step, ...]:
        match self.value:
            case None:
                return ()
            case list():
                return tuple(Trace(item).step() for item in self.value)
            case _:
                return (self.step(),)

    def step(self) -> Step:
        match self.value:
            case str(text):
                return Thought(text=text)
            case {"function": {"name": str(name), **function}, **rest}:
                return Call(
                    name=name,
                    arguments=JsonText(function.get("arguments")).text,
                    result=JsonText(rest.get("result", rest.get("output"))).text,
                )
            case {"name": str(name), **rest} | {"tool": str(name), **rest}:
                return Call(
                    name=name,
                    arguments=JsonText(rest.get("arguments", rest.get("input"))).text,
                    result=JsonText(rest.get("result", rest.get("output"))).text,
                )
            case {"thought": str(text)}:
                return Thought(text=text)
            case _:
                return Thought(text=JsonText(self.value).text)


class Reading(msgspec.Struct, frozen=True):
    """An answer's decoded JSON, read as the agent's spec says."""

    data: object
    spec: AgentSpec
    shown: str

    def answer(self) -> Answer:
        """The Answer; AgentFailure("bad_answer") naming the path when the text is not there."""
        try:
            said = Path(self.spec.answer).found(self.data)
        except PathMissing as missing:
            raise AgentFailure("bad_answer", f"the answer from {self.shown} has {missing}") from None
        match said:
            case bool() | None:
                raise AgentFailure("bad_answer", self.not_text())
            case str(text):
                pass
            case int() | float():
                text = msgspec.json.encode(said).decode()
            case _:
                raise AgentFailure("bad_answer", self.not_text())
        steps: tuple[Step, ...] = ()
        if self.spec.steps:
            try:
                steps = Trace(Path(self.spec.steps).found(self.data)).steps()
            except PathMissing:
                steps = ()
        return Answer(text=text, usage=self.spec.tokens.usage(self.data), steps=steps)

    def not_text(self) -> str:
        return f"the answer from {self.shown} at {self.spec.answer!r} is not a string or a number"


class JsonAgent(msgspec.Struct, frozen=True, dict=True):
    """The agent an AgentSpec (already `resolved`) describes; each turn may take `timeout` seconds
    to connect, send and be read; `verify` is how its HTTPS is checked (Tls.context). Inside
    `kept()` (one run), a conversation that closes hands its client, with its kept connection, to
    the next one that opens (Handover)."""

    spec: AgentSpec
    timeout: float
    verify: ssl.SSLContext | bool = True
    handover: Handover = msgspec.field(default_factory=Handover)

    def __post_init__(self) -> None:
        if self.timeout <= 0:
            raise ValueError("the agent's timeout must be longer than 0 seconds")

    def conversation(self, key: str) -> JsonConnection:
        return JsonConnection(self, key)

    @contextlib.asynccontextmanager
    async def kept(self) -> AsyncIterator[None]:
        """While the block runs, connections are handed from conversation to conversation."""
        async with self.handover.kept():
            yield

    def client(self) -> httpx.AsyncClient:
        """A new client for one conversation at a time: one connection, kept for all its turns."""
        return httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout),
            limits=ONE,
            http1=True,
            http2=False,
            verify=self.verify,
            follow_redirects=False,
        )

    @functools.cached_property
    def url(self) -> httpx.URL:
        """The URL, parsed once."""
        return httpx.URL(self.spec.url)

    @functools.cached_property
    def shown(self) -> str:
        """The URL as errors show it (Shown), worked out once."""
        return Shown(self.spec.url).text

    @functools.cached_property
    def headers(self) -> httpx.Headers:
        """Every request's headers (httpx copies them into each request, never changing these)."""
        headers = httpx.Headers(
            {"Content-Type": "application/json", "Accept": "application/json", "Accept-Encoding": "identity"}
        )
        headers.update(self.spec.headers)
        return headers


class JsonConnection:
    """One conversation with a JsonAgent, identified by `key` (its `$conversation`): opening it
    takes a client with one HTTP/1.1 connection, kept for all its turns and never shared with
    another conversation at the same time; closing it gives the client back (Handover).

    It keeps the dialogue so far: a turn adds the user's message and the agent's answer only once
    the agent answered, so a turn refused with Busy (429, 503) can be sent again as it was."""

    def __init__(self, agent: JsonAgent, key: str) -> None:
        self._agent = agent
        self._key = key
        self._client: httpx.AsyncClient | None = None
        self._history: list[Message] = []

    @property
    def shown(self) -> str:
        return self._agent.shown

    @property
    def masked(self) -> Masked:
        """The agent's header values (and their tokens after `Bearer `), hidden in what it said."""
        values = self._agent.spec.headers.values()
        return Masked((*values, *(value.removeprefix("Bearer ").strip() for value in values)))

    async def __aenter__(self) -> Self:
        self._client = self._agent.handover.client(self._agent.client)
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            # a connection the agent's side broke (a TLS alert, a reset) may fail to close cleanly:
            # the turn already failed or succeeded on its own, so closing raises nothing
            with contextlib.suppress(ssl.SSLError, OSError, httpx.HTTPError):
                await self._agent.handover.give(client)

    async def reply(self, text: str) -> Answer:
        if self._client is None:
            raise RuntimeError("open the conversation with `async with` before its first turn")
        asked = Message(role="user", content=text)
        dialogue = (*self._history, asked)
        body = Body(self._agent.spec.body).filled(dialogue, text, self._key)
        try:
            content = await self.sent(self._client, msgspec.json.encode(body), self._agent.headers)
        except httpx.ConnectTimeout:
            raise AgentFailure("connection", f"no connection to {self.shown} (timed out)") from None
        except httpx.TimeoutException as error:
            raise AgentFailure("timeout", f"{self.shown} took too long ({type(error).__name__})") from None
        except httpx.ConnectError:
            raise AgentFailure("connection", f"no connection to {self.shown}") from None
        except (httpx.HTTPError, ssl.SSLError, OSError) as error:
            failed = type(error).__name__
            raise AgentFailure("connection", f"the request to {self.shown} failed ({failed})") from None
        try:
            data = msgspec.json.decode(content)
        except msgspec.DecodeError:
            raise AgentFailure("bad_answer", f"the answer from {self.shown} is not JSON") from None
        answer = Reading(data, self._agent.spec, self.shown).answer()
        self._history += [asked, Message(role="assistant", content=answer.text)]
        return answer

    async def sent(self, client: httpx.AsyncClient, body: bytes, headers: httpx.Headers) -> bytes:
        """The body of the agent's answer to one request, read up to MOST_BYTES; Busy on a refusal,
        AgentFailure on any other status that is not 2xx."""
        async with client.stream("POST", self._agent.url, content=body, headers=headers) as response:
            status = response.status_code
            if not 200 <= status < 300:
                said = await Limited(REFUSAL_BYTES).read(response)
                message = ErrorBody(said or b"", self.masked).message()
                detail = f"HTTP {status} from {self.shown}" + (f": {message}" if message else "")
                if status in (429, 503):
                    raise Busy(Hints(response.headers).seconds(), detail, status=status, message=message)
                raise AgentFailure(f"http_{status}", detail, status=status, message=message)
            content = await Limited(MOST_BYTES).read(response)
            if content is None:
                raise AgentFailure("answer_too_large", f"the answer from {self.shown} is over 4 MiB")
            return content


class Limited(msgspec.Struct, frozen=True):
    """A response body read up to `most` bytes (decoded), never more."""

    most: int

    async def read(self, response: httpx.Response) -> bytes | None:
        """The body, or None when it is longer than `most` bytes (what was read is let go)."""
        length = response.headers.get("content-length", "")
        if length.isdecimal() and int(length) > self.most and not response.headers.get("content-encoding"):
            return None
        content = bytearray()
        async for chunk in response.aiter_bytes():
            content += chunk
            if len(content) > self.most:
                return None
        return bytes(content)
