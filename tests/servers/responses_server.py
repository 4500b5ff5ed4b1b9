"""ResponsesServer: a real ASGI server of the OpenAI Responses API (Starlette, served by uvicorn in a
thread of its own on a free loopback port). Every object it sends is built, and so checked, with
the `openai` package's own types (Response, its output items, ResponseUsage, the stream events), and
turned to JSON as that package does (`to_dict`).

`POST /v1/responses` (`{"model", "input", "store", "previous_response_id", "stream"}`):

* It keeps every response asked to be stored and continues the conversation of
  `previous_response_id`: the answer is `You said: <input> (<n> user messages)`, n counting the
  inputs of the chain; its usage is the characters of those inputs in, of the answer out. An
  unknown previous id is 400 `previous_response_not_found`, a body without `model` is 400
  `missing_required_parameter` (OpenAI's words for both).
* By `model`: `echo` (one message); `tools` (the message, then a `function_call` of `lookup` with
  `{"order": 4411}`); `parts` (a reasoning item, then a message of two `output_text` parts and a
  refusal, then a message of one part: the text `You said: ` + input + ` (n user messages)` split
  across the three output_text parts); `fails` (status `failed`, error `server_error` "The model
  crashed mid-answer."; streamed: two deltas, then `response.failed`); `errors` (streamed: a delta,
  then an `error` event "Rate limit reached for requests"; whole: as `echo`); `quiet` (as `echo`,
  but streamed as `response.created`, `response.in_progress` and `response.completed`: no delta).
* `stream: true` answers with Server-Sent Events as OpenAI sends them (each with its `event:`
  name; under `/unnamed/v1/responses` without it): `response.created`, `response.in_progress`, per
  item `response.output_item.added`, per text part `response.content_part.added`, the text in
  `response.output_text.delta` pieces of 5 characters, `response.output_text.done`,
  `response.content_part.done`, function arguments in `response.function_call_arguments.delta`
  and `.done`, `response.output_item.done`, and `response.completed` with the whole response and
  its usage.

Every request is recorded as Seen (path, headers, JSON body)."""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, Self

from openai import BaseModel as OpenAiModel
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseErrorEvent,
    ResponseFailedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseInProgressEvent,
    ResponseOutputItem,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputRefusal,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
    ResponseUsage,
)
from openai.types.responses.response_reasoning_item import Summary
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from tests.servers.asgi import Served

ARGUMENTS = '{"order": 4411}'
CRASHED = "The model crashed mid-answer."
RATE_LIMITED = "Rate limit reached for requests"


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    path: str
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class Kept:
    """A stored response: the user's input, and the response it continued ("" for none)."""

    input: str
    previous: str


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


def refused(status: int, message: str, param: str, code: str) -> JSONResponse:
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return JSONResponse({"error": error}, status_code=status)


@dataclass
class ResponsesServer:
    """A running Responses API server; `url` is its base address. Use with `with`."""

    requests: list[Seen] = field(default_factory=list)
    kept: dict[str, Kept] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._served = Served(
            Starlette(
                routes=[
                    Route("/v1/responses", self.respond, methods=["POST"]),
                    Route("/unnamed/v1/responses", self.respond, methods=["POST"]),
                ]
            )
        )

    @property
    def url(self) -> str:
        return self._served.url

    def __enter__(self) -> Self:
        self._served.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._served.stop()

    def bodies(self) -> list[Any]:
        with self._lock:
            return [seen.body for seen in self.requests]

    async def respond(self, request: Request) -> JSONResponse | StreamingResponse:
        body = json.loads(await request.body())
        with self._lock:
            self.requests.append(Seen(request.url.path, dict(request.headers), body))
        if not body.get("model"):
            return refused(400, "Missing required parameter: 'model'.", "model", "missing_required_parameter")
        previous = body.get("previous_response_id") or ""
        if previous and previous not in self.kept:
            message = f"Previous response with id '{previous}' not found."
            return refused(400, message, "previous_response_id", "previous_response_not_found")
        answer = Answered(new_id("resp"), str(body["model"]), self.inputs(previous) + [str(body["input"])])
        if body.get("store", True):
            with self._lock:
                self.kept[answer.id] = Kept(str(body["input"]), previous)
        if body.get("stream"):
            named = not request.url.path.startswith("/unnamed")
            return StreamingResponse(Streamed(answer, named).events(), media_type="text/event-stream")
        ended = "failed" if answer.model == "fails" else "completed"
        return JSONResponse(answer.response(ended).to_dict(mode="json"))

    def inputs(self, last: str) -> list[str]:
        """The inputs of the chain of stored responses ending with `last`, first first."""
        said: list[str] = []
        with self._lock:
            while last:
                said.insert(0, self.kept[last].input)
                last = self.kept[last].previous
        return said


@dataclass
class Answered:
    """One response the server makes to the chain of `inputs` (the latest last)."""

    id: str
    model: str
    inputs: list[str]
    created: int = field(default_factory=lambda: int(time.time()))

    @property
    def text(self) -> str:
        return f"You said: {self.inputs[-1]} ({len(self.inputs)} user messages)"

    def texts(self) -> list[list[str]]:
        """The text parts of each message item."""
        if self.model == "parts":
            latest = self.inputs[-1]
            return [["You said: ", latest], [f" ({len(self.inputs)} user messages)"]]
        return [[self.text]]

    def items(self, done: bool = True) -> list[ResponseOutputItem]:
        status = "completed" if done else "in_progress"
        messages: list[ResponseOutputItem] = []
        for index, texts in enumerate(self.texts()):
            content: list[ResponseOutputText | ResponseOutputRefusal] = [
                ResponseOutputText(type="output_text", text=text if done else "", annotations=[])
                for text in texts
            ]
            if self.model == "parts" and index == 0:
                content.append(ResponseOutputRefusal(type="refusal", refusal="I cannot share that."))
            messages.append(
                ResponseOutputMessage(
                    id=f"msg_{self.id}_{index}",
                    type="message",
                    role="assistant",
                    status=status,
                    content=content,
                )
            )
        if self.model == "parts":
            summary = [Summary(type="summary_text", text="Echo the input.")]
            messages.insert(0, ResponseReasoningItem(id=f"rs_{self.id}", type="reasoning", summary=summary))
        if self.model == "tools":
            call = ResponseFunctionToolCall(
                id=f"fc_{self.id}",
                call_id=f"call_{self.id}",
                type="function_call",
                name="lookup",
                arguments=ARGUMENTS if done else "",
                status=status,
            )
            messages.append(call)
        return messages

    def usage(self) -> ResponseUsage:
        said = sum(len(text) for text in self.inputs)
        return ResponseUsage(
            input_tokens=said,
            input_tokens_details=InputTokensDetails(cached_tokens=0, cache_write_tokens=0),
            output_tokens=len(self.text),
            output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
            total_tokens=said + len(self.text),
        )

    def response(self, status: str = "completed") -> Response:
        """The response object: `in_progress` (no output yet), `completed` (its output and usage)
        or `failed` (its error)."""
        return Response(
            id=self.id,
            object="response",
            created_at=self.created,
            model=self.model,
            status=status,
            error={"code": "server_error", "message": CRASHED} if status == "failed" else None,
            incomplete_details=None,
            instructions=None,
            metadata={},
            output=self.items() if status == "completed" else [],
            parallel_tool_calls=True,
            tool_choice="auto",
            tools=[],
            temperature=1.0,
            top_p=1.0,
            previous_response_id=None,
            store=True,
            usage=self.usage() if status == "completed" else None,
        )


class Streamed:
    """A response's stream of events, in the order OpenAI sends them."""

    def __init__(self, answer: Answered, named: bool) -> None:
        self._answer = answer
        self._named = named
        self._sequence = 0

    def event(self, made: type[OpenAiModel], kind: str, **fields: Any) -> bytes:
        """One event of type `made` (checked by the `openai` package) as SSE, numbered in order."""
        data = made(type=kind, sequence_number=self._sequence, **fields).to_dict(mode="json")
        self._sequence += 1
        name = f"event: {kind}\n" if self._named else ""
        return f"{name}data: {json.dumps(data)}\n\n".encode()

    async def events(self) -> AsyncIterator[bytes]:
        answer = self._answer
        started = answer.response("in_progress")
        yield self.event(ResponseCreatedEvent, "response.created", response=started)
        yield self.event(ResponseInProgressEvent, "response.in_progress", response=started)
        if answer.model == "fails":
            for piece in ("You s", "aid: "):
                yield self.delta(f"msg_{answer.id}_0", 0, 0, piece)
            yield self.event(ResponseFailedEvent, "response.failed", response=answer.response("failed"))
            return
        if answer.model == "errors":
            yield self.delta(f"msg_{answer.id}_0", 0, 0, "You s")
            said = {"code": "rate_limit_exceeded", "message": RATE_LIMITED, "param": None}
            yield self.event(ResponseErrorEvent, "error", **said)
            return
        if answer.model != "quiet":
            for index, (empty, item) in enumerate(zip(answer.items(done=False), answer.items(), strict=True)):
                for event in self.item(index, empty, item):
                    yield event
        yield self.event(ResponseCompletedEvent, "response.completed", response=answer.response())

    def item(self, index: int, empty: ResponseOutputItem, item: ResponseOutputItem) -> Iterator[bytes]:
        """The events of one output item: added (`empty`), its parts or arguments, done."""
        yield self.event(
            ResponseOutputItemAddedEvent, "response.output_item.added", item=empty, output_index=index
        )
        if isinstance(item, ResponseOutputMessage):
            for part_index, part in enumerate(item.content):
                yield from self.part(item.id, index, part_index, part)
        if isinstance(item, ResponseFunctionToolCall) and item.id:
            where = {"item_id": item.id, "output_index": index}
            for at in range(0, len(item.arguments), 6):
                kind = "response.function_call_arguments.delta"
                yield self.event(
                    ResponseFunctionCallArgumentsDeltaEvent, kind, delta=item.arguments[at : at + 6], **where
                )
            kind = "response.function_call_arguments.done"
            yield self.event(ResponseFunctionCallArgumentsDoneEvent, kind, arguments=item.arguments, **where)
        yield self.event(
            ResponseOutputItemDoneEvent, "response.output_item.done", item=item, output_index=index
        )

    def part(
        self, item: str, index: int, part_index: int, part: ResponseOutputText | ResponseOutputRefusal
    ) -> Iterator[bytes]:
        """The events of one content part of a message: its text in deltas when it is text."""
        where = {"item_id": item, "output_index": index, "content_index": part_index}
        empty = part.model_copy(update={"text": ""}) if isinstance(part, ResponseOutputText) else part
        yield self.event(ResponseContentPartAddedEvent, "response.content_part.added", part=empty, **where)
        if isinstance(part, ResponseOutputText):
            for at in range(0, len(part.text), 5):
                yield self.delta(item, index, part_index, part.text[at : at + 5])
            yield self.event(
                ResponseTextDoneEvent, "response.output_text.done", text=part.text, logprobs=[], **where
            )
        yield self.event(ResponseContentPartDoneEvent, "response.content_part.done", part=part, **where)

    def delta(self, item: str, index: int, part_index: int, text: str) -> bytes:
        where = {"item_id": item, "output_index": index, "content_index": part_index}
        return self.event(
            ResponseTextDeltaEvent, "response.output_text.delta", delta=text, logprobs=[], **where
        )
