"""The models that play the simulated user and the judge: the model interface and its reply, the
schema a judge may ask its reply to follow, how a model's call fails, and a model behind an
OpenAI-compatible chat-completions endpoint, with what it learns about its server once per run.

Every model is played through wrappers: one turns any error of a model into a ModelFailure, one
sends through the participant's places (busy.py), one (inline.py) puts the system text at the start
of the first user message."""

from __future__ import annotations

from typing import Literal, Protocol

import httpx
import msgspec

from convy.data import Data
from convy.errors import ConvyError
from convy.play.agent import Message, Usage
from convy.play.busy import Busy, GaveUp, Hints, Places
from convy.play.errorbody import ADJUSTABLE, CONTEXT, REFUSED, RETRIED, UNSUPPORTED, ErrorBody, Masked
from convy.play.keptclient import ADDRESSES
from convy.play.unreached import ConnectProblem

Kind = Literal["failure", "timeout", "busy", "context", "unreadable", "unreachable"]

UNREACHED = "could not be reached"
"""What the detail of a model that could not be reached says (a setup mistake, never waited for)."""

FORMATS: tuple[str, ...] = ("json_schema", "json_object_schema", "json_object", "none")
"""The judge's structured-output chain, strongest first: `response_format` json_schema (strict),
json_object carrying the schema under `schema` (llama.cpp), plain json_object, none."""


class Reply(Data, frozen=True, kw_only=True):
    """A model's reply: its text and the tokens it reported."""

    text: str
    usage: Usage | None = None


class ModelFailure(ConvyError):
    """The simulated user's or the judge's model failed, stayed busy, or answered something convy
    cannot use: the attempt gets NoVerdict. `kind` says which (`failure`, `timeout`, `busy`,
    `context`: the request does not fit the model's context, `unreadable`: a judge reply that
    could not be read, `unreachable`: no connection could be made — refused, a name not resolved,
    TLS failed); `status` is the HTTP status of the answer (0: none), `message` the
    service's own words (one line, masked), `raw` an unreadable reply as it came (at most 2,000
    characters), `usage` the tokens the failed calls still spent."""

    def __init__(
        self,
        detail: str,
        *,
        kind: Kind = "failure",
        status: int = 0,
        message: str = "",
        raw: str = "",
        usage: Usage | None = None,
    ) -> None:
        super().__init__(detail)
        self.kind: Kind = kind
        self.status = status
        self.message = message
        self.raw = raw[:2000]
        self.usage = usage


class Schema(Data, frozen=True, kw_only=True):
    """The JSON a judge's reply must be, as a JSON schema in the subset OpenAI's strict `json_schema`
    accepts; the same schema goes inside `json_object` to servers that take it there (llama.cpp
    turns it into a grammar). A Schema is true, so a model that only knows `json: bool` still asks
    for JSON."""

    name: str
    schema: dict[str, object]


class Model(Protocol):
    """A chat model: messages in, one reply out."""

    @property
    def name(self) -> str:
        """The model's name as written to run.json (never its key or headers)."""
        ...

    async def reply(self, messages: tuple[Message, ...], json: bool | Schema = False) -> Reply:
        """The model's next message; `json` asks for a JSON object (response_format), a Schema for
        JSON that follows it where the server can."""
        ...


class CompletionRequest(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The body of a chat-completions request."""

    model: str
    messages: tuple[Message, ...]
    response_format: dict[str, object] | None = None
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    temperature: float | None = None


class CompletionMessage(msgspec.Struct, frozen=True):
    """`choices[0].message` of a chat completion, as far as convy reads it (`null` is None)."""

    content: str | None = None


class CompletionChoice(msgspec.Struct, frozen=True):
    """One of a chat completion's `choices`."""

    message: CompletionMessage | None = None


class CompletionUsage(msgspec.Struct, frozen=True):
    """`usage` of a chat completion; a count it does not give is None (unknown)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Completion(msgspec.Struct, frozen=True):
    """A chat completion (the response), as far as convy reads it."""

    choices: tuple[CompletionChoice, ...] | None = None
    usage: CompletionUsage | None = None

    def spent(self) -> Usage:
        """The tokens it reports; a completion without `usage` was still a call: its counts are
        unknown (never 0, never "not asked")."""
        if self.usage is None:
            return Usage()
        return Usage(input=self.usage.prompt_tokens, output=self.usage.completion_tokens)

    def reply(self) -> Reply:
        """The completion as a Reply; ModelFailure (with the tokens spent) when it holds no text."""
        if not self.choices:
            raise ModelFailure("the completion has no choices", usage=self.spent())
        message = self.choices[0].message
        if message is None or message.content is None:
            raise ModelFailure("the completion's message has no content", usage=self.spent())
        if not message.content.strip():
            raise ModelFailure("empty reply", usage=self.spent())
        return Reply(text=message.content, usage=self.spent())


class Learned:
    """What a model's server refused by name, learned once and kept for the run: how far down the
    structured-output chain (FORMATS) it must go, whether it wants `max_completion_tokens` instead
    of `max_tokens`, and whether it refuses `temperature`."""

    def __init__(self) -> None:
        self.format = 0
        self.completion_tokens = False
        self.no_temperature = False


class OpenAiModel(msgspec.Struct, frozen=True, kw_only=True):
    """A model behind an OpenAI-compatible endpoint: `POST {url}/chat/completions` (a query in `url`,
    such as Azure's `api-version`, is kept), with `Authorization: Bearer {key}` unless the key is
    empty. `client` is the participant's one client (its connection pool and its timeout, the
    `model-timeout`). Every request carries `max_tokens` (when above 0) and `temperature` (when
    set); a server that refuses either by name gets `max_completion_tokens` / no temperature from
    then on. A Schema asked for goes down the structured-output chain (FORMATS) as the server
    refuses each step by name (HTTP 400, 422 or 500 naming response_format, json_schema or
    json_object); what it learns is kept in `learned` for the run.

    HTTP 429 and 503 are Busy; 500, 502 and 504, a timeout and a connection reset are Busy too (a
    model call has no side effects, so Places asks again within patience), each with the wait the
    answer's headers asked for (Hints). No connection at all (refused, a name not resolved, TLS
    failed) is no busy service but a setup mistake: a ModelFailure (`unreachable`) at once, naming
    `setting`, the setting that gave its URL. Any other error status, a body that is not a chat
    completion, or one without text is a ModelFailure. Each names the URL without its query and
    carries the server's own message, masked — never the key."""

    url: str
    key: str
    name: str
    client: httpx.AsyncClient
    setting: str = "model-url"
    """The setting its URL comes from, as a model that cannot be reached names it."""
    max_tokens: int = 0
    temperature: float | None = None
    learned: Learned = msgspec.field(default_factory=Learned)

    def __repr__(self) -> str:
        return f"OpenAiModel(url={self.shown!r}, name={self.name!r})"

    @property
    def endpoint(self) -> httpx.URL:
        """`{url}/chat/completions`, with the query of `url`."""
        return ADDRESSES.completions(self.url)

    @property
    def shown(self) -> str:
        """The endpoint as errors show it: without query, fragment or user info."""
        try:
            return str(self.endpoint.copy_with(query=None, fragment=None, userinfo=b""))
        except httpx.InvalidURL:
            return "the model URL"

    @property
    def masked(self) -> Masked:
        return Masked((self.key,))

    @property
    def seconds(self) -> float:
        """The read timeout of its client, as a timeout's message gives it."""
        read = self.client.timeout.read
        return read if read is not None else 0.0

    def body(self, messages: tuple[Message, ...], json: bool | Schema) -> CompletionRequest:
        """The request as the server is now known to take it."""
        tokens = self.max_tokens if self.max_tokens > 0 else None
        temperature = None if self.learned.no_temperature else self.temperature
        return CompletionRequest(
            model=self.name,
            messages=messages,
            response_format=self.response_format(json),
            max_tokens=None if self.learned.completion_tokens else tokens,
            max_completion_tokens=tokens if self.learned.completion_tokens else None,
            temperature=temperature,
        )

    def step(self, json: bool | Schema) -> str:
        """The step of FORMATS this request is at."""
        match json:
            case Schema():
                return FORMATS[self.learned.format]
            case True:
                return FORMATS[max(self.learned.format, FORMATS.index("json_object"))]
            case _:
                return "none"

    def response_format(self, json: bool | Schema) -> dict[str, object] | None:
        step = self.step(json)
        match json, step:
            case Schema(name=name, schema=strict), "json_schema":
                return {
                    "type": "json_schema",
                    "json_schema": {"name": name, "strict": True, "schema": strict},
                }
            case Schema(schema=schema), "json_object_schema":
                return {"type": "json_object", "schema": schema}
            case _, "json_object":
                return {"type": "json_object"}
            case _:
                return None

    async def reply(self, messages: tuple[Message, ...], json: bool | Schema = False) -> Reply:
        for _ in range(len(FORMATS) + 3):
            step, body = self.step(json), self.body(messages, json)
            response = await self.sent(body)
            if response.status_code == 200:
                return self.read(response)
            message = ErrorBody(response.content, self.masked).message()
            if self.adjusted(response.status_code, message, body, step):
                continue
            self.refuse(response, message)
        raise ModelFailure(f"{self.shown} kept refusing the request's parameters")

    async def sent(self, body: CompletionRequest) -> httpx.Response:
        """The server's answer to one request; Busy when it timed out or the connection failed."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        try:
            return await self.client.post(self.endpoint, content=msgspec.json.encode(body), headers=headers)
        except httpx.ConnectTimeout:
            raise Busy(
                None, f"no connection to {self.shown} within {self.seconds:g} s", kind="timeout"
            ) from None
        except httpx.TimeoutException:
            raise Busy(
                None, f"no answer from {self.shown} within {self.seconds:g} s", kind="timeout"
            ) from None
        except httpx.InvalidURL as error:
            raise ModelFailure(f"request to {self.shown} failed ({type(error).__name__})") from None
        except httpx.ConnectError as error:
            why = ConnectProblem(error).text() or f" ({type(error).__name__})"
            raise ModelFailure(
                f"{self.shown} {UNREACHED}{why}; check {self.setting}", kind="unreachable"
            ) from None
        except httpx.HTTPError as error:
            raise Busy(
                None, f"request to {self.shown} failed ({type(error).__name__})", kind="connection"
            ) from None

    def read(self, response: httpx.Response) -> Reply:
        try:
            completion = msgspec.json.decode(response.content, type=Completion)
        except msgspec.DecodeError as error:
            raise ModelFailure(f"the reply from {self.shown} is not a chat completion: {error}") from None
        return completion.reply()

    def adjusted(self, status: int, message: str, body: CompletionRequest, step: str) -> bool:
        """Whether the answer to `body` (sent at `step` of FORMATS) refused a parameter by name that
        the request can do without, having learned to do without it from now on (the step after the
        one refused, never further: requests refused at the same step at once move one step,
        together; max_tokens for max_completion_tokens; temperature)."""
        if status not in ADJUSTABLE:
            return False
        said = message.lower()
        if body.response_format is not None and any(
            name in said for name in ("response_format", "json_schema", "json_object")
        ):
            self.learned.format = max(self.learned.format, FORMATS.index(step) + 1)
            return True
        if (
            body.max_tokens is not None
            and "max_tokens" in said
            and ("max_completion_tokens" in said or any(word in said for word in UNSUPPORTED))
        ):
            self.learned.completion_tokens = True
            return True
        if body.temperature is not None and "temperature" in said:
            self.learned.no_temperature = True
            return True
        return False

    def refuse(self, response: httpx.Response, message: str) -> None:
        """Raises what an error answer is: Busy for one worth asking again, else ModelFailure."""
        status = response.status_code
        said = f" — {message}" if message else ""
        detail = f"HTTP {status} from {self.shown}{said}"
        if status in RETRIED:
            raise Busy(
                Hints(response.headers).seconds(),
                detail,
                status=status,
                message=message,
                kind="busy" if status in REFUSED else "failure",
            )
        kind: Kind = "context" if CONTEXT.search(message) else "failure"
        raise ModelFailure(detail, kind=kind, status=status, message=message)


class Contained(msgspec.Struct, frozen=True):
    """The same model, with any error of its other than Busy turned into ModelFailure, so a bug in
    a model (a project's own, say) is a model failure, not a crashed run or the agent's fault."""

    model: Model

    @property
    def name(self) -> str:
        return self.model.name

    async def reply(self, messages: tuple[Message, ...], json: bool | Schema = False) -> Reply:
        try:
            return await self.model.reply(messages, json)
        except (Busy, ModelFailure):
            raise
        except Exception as error:
            raise ModelFailure(f"the model raised {type(error).__name__}: {error}") from error


class PatientModel(msgspec.Struct, frozen=True):
    """The same model, each reply sent through the participant's Places: a place for each try,
    its rate, and retries while the service is busy or failing in a way worth asking again;
    patience run out is a ModelFailure of the last try's kind (`busy` for refusals, `timeout`,
    else `failure`), saying how long it waited."""

    model: Model
    places: Places

    @property
    def name(self) -> str:
        return self.model.name

    async def reply(self, messages: tuple[Message, ...], json: bool | Schema = False) -> Reply:
        try:
            return await self.places.send(lambda: self.model.reply(messages, json))
        except GaveUp as error:
            last = error.busy
            kind: Kind = "busy" if last.kind == "busy" else "timeout" if last.kind == "timeout" else "failure"
            raise ModelFailure(str(error), kind=kind, status=last.status, message=last.message) from error


class Models(msgspec.Struct, frozen=True, kw_only=True):
    """The simulated user's model and the judge's; `panel`: further judges that vote with it
    (`judge-panel`), each as many times as the judge; `later`: the judge and each panel member, in
    that order, as asked for their votes after the first (at `vote-temperature`; empty: the same
    models as for the first)."""

    user: Model
    judge: Model
    panel: tuple[Model, ...] = ()
    later: tuple[Model, ...] = ()
