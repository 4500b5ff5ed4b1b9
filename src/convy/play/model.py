"""The model interface Model, its Reply, and ModelFailure; OpenAiModel, a model behind an
OpenAI-compatible chat-completions endpoint, and the shape of what it sends and reads (Completion);
the wrappers Contained, which turns any error of a model into ModelFailure, and PatientModel, which
sends through the participant's Places; Models, the simulated user's model and the judge's."""

from __future__ import annotations

from typing import Literal, Protocol

import httpx
import msgspec

from convy.data import Data
from convy.play.agent import Message, Usage
from convy.play.busy import Busy, GaveUp, Places, RetryAfter


class Reply(Data, frozen=True, kw_only=True):
    """A model's reply: its text and the tokens it reported."""

    text: str
    usage: Usage | None = None


class ModelFailure(Exception):
    """The simulated user's or the judge's model failed, stayed busy, or answered something convy
    cannot use: the attempt gets NoVerdict."""


class Model(Protocol):
    """A chat model: messages in, one reply out."""

    @property
    def name(self) -> str:
        """The model's name as written to run.json (never its key or headers)."""
        ...

    async def reply(self, messages: tuple[Message, ...], json: bool = False) -> Reply:
        """The model's next message; `json` asks for a JSON object (response_format)."""
        ...


class ResponseFormat(msgspec.Struct, frozen=True):
    """`response_format` of a chat-completions request."""

    type: Literal["json_object"] = "json_object"


class CompletionRequest(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The body of a chat-completions request."""

    model: str
    messages: tuple[Message, ...]
    response_format: ResponseFormat | None = None


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

    def reply(self) -> Reply:
        """The completion as a Reply; ModelFailure when it holds no text."""
        if not self.choices:
            raise ModelFailure("the completion has no choices")
        message = self.choices[0].message
        if message is None or message.content is None:
            raise ModelFailure("the completion's message has no content")
        if not message.content.strip():
            raise ModelFailure("empty reply")
        usage = (
            Usage(input=self.usage.prompt_tokens, output=self.usage.completion_tokens)
            if self.usage is not None
            else None
        )
        return Reply(text=message.content, usage=usage)


class ErrorDetail(msgspec.Struct, frozen=True):
    """`error` of an OpenAI-style error body."""

    message: str = ""


class ErrorBody(msgspec.Struct, frozen=True):
    """An OpenAI-style error body: `{"error": {"message": ...}}`."""

    error: ErrorDetail | str | None = None


class OpenAiModel(msgspec.Struct, frozen=True, kw_only=True):
    """A model behind an OpenAI-compatible endpoint: `POST {url}/chat/completions` (a query in `url`,
    such as Azure's `api-version`, is kept), with `Authorization: Bearer {key}` unless the key is
    empty. `client` is the participant's one client (its connection pool and timeouts).

    HTTP 429 and 503 are Busy (with the `Retry-After` asked for); any other error status, a timeout,
    a connection that failed, a body that is not a chat completion, or one without text is a
    ModelFailure naming the URL without its query — never the key."""

    url: str
    key: str
    name: str
    client: httpx.AsyncClient

    def __repr__(self) -> str:
        return f"OpenAiModel(url={self.shown!r}, name={self.name!r})"

    @property
    def endpoint(self) -> httpx.URL:
        """`{url}/chat/completions`, with the query of `url`."""
        base = httpx.URL(self.url)
        return base.copy_with(path=base.path.rstrip("/") + "/chat/completions")

    @property
    def shown(self) -> str:
        """The endpoint as errors show it: without query, fragment or user info."""
        try:
            return str(self.endpoint.copy_with(query=None, fragment=None, userinfo=b""))
        except httpx.InvalidURL:
            return "the model URL"

    async def reply(self, messages: tuple[Message, ...], json: bool = False) -> Reply:
        body = CompletionRequest(
            model=self.name,
            messages=messages,
            response_format=ResponseFormat() if json else None,
        )
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        try:
            response = await self.client.post(
                self.endpoint, content=msgspec.json.encode(body), headers=headers
            )
        except httpx.TimeoutException as error:
            raise ModelFailure(f"timeout ({type(error).__name__}) from {self.shown}") from None
        except (httpx.HTTPError, httpx.InvalidURL) as error:
            raise ModelFailure(f"request to {self.shown} failed ({type(error).__name__})") from None
        if response.status_code in (429, 503):
            raise Busy(
                RetryAfter(response.headers.get("retry-after")).seconds(),
                f"HTTP {response.status_code} from {self.shown}",
            )
        if response.status_code != 200:
            raise ModelFailure(f"HTTP {response.status_code} from {self.shown}{self.said(response)}")
        try:
            completion = msgspec.json.decode(response.content, type=Completion)
        except msgspec.DecodeError as error:
            raise ModelFailure(f"the reply from {self.shown} is not a chat completion: {error}") from None
        return completion.reply()

    def said(self, response: httpx.Response) -> str:
        """`: <the error's message>` from an OpenAI-style error body (short, the key masked), or ""."""
        try:
            body = msgspec.json.decode(response.content, type=ErrorBody)
        except msgspec.DecodeError:
            return ""
        match body.error:
            case ErrorDetail(message=message) | str(message) if message.strip():
                text = " ".join(message.split())
                if self.key:
                    text = text.replace(self.key, "***")
                return f": {text[:200]}"
            case _:
                return ""


class Contained(msgspec.Struct, frozen=True):
    """The same model, with any error of its other than Busy turned into ModelFailure, so a bug in
    a model (a project's own, say) is a model failure, not a crashed run or the agent's fault."""

    model: Model

    @property
    def name(self) -> str:
        return self.model.name

    async def reply(self, messages: tuple[Message, ...], json: bool = False) -> Reply:
        try:
            return await self.model.reply(messages, json)
        except (Busy, ModelFailure):
            raise
        except Exception as error:
            raise ModelFailure(f"the model raised {type(error).__name__}: {error}") from error


class PatientModel(msgspec.Struct, frozen=True):
    """The same model, each reply sent through the participant's Places: a place for each try,
    its rate, and retries while the service is busy; patience run out is a ModelFailure."""

    model: Model
    places: Places

    @property
    def name(self) -> str:
        return self.model.name

    async def reply(self, messages: tuple[Message, ...], json: bool = False) -> Reply:
        try:
            return await self.places.send(lambda: self.model.reply(messages, json))
        except GaveUp as error:
            raise ModelFailure(f"busy: gave up after patience ({error.busy})") from error


class Models(msgspec.Struct, frozen=True, kw_only=True):
    """The simulated user's model and the judge's."""

    user: Model
    judge: Model
