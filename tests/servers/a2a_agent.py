"""A2aAgent: a real A2A agent made of the official a2a-sdk's own server classes (its JSON-RPC
routes and dispatcher, DefaultRequestHandler, InMemoryTaskStore, TaskUpdater, its agent card
route), served by uvicorn in a thread of its own on a free loopback port. Each path is an agent of
its own, speaking A2A 1.0 and — through the SDK's compatibility layer — 0.3 on the same endpoint;
every agent answers whole or streamed, as it is asked:

* `/message` — a Message of two text parts: `echo: <text>` and `Anything else?`.
* `/task` — a Task: `working` status messages (`Looking into "<text>"…`, `Almost there…`), then one
  artifact in three chunks (`You said`, `: `, `<text>`; the later ones `append`), then completed
  with the status text `Done.`.
* `/quiet` — a Task that says nothing but its `working` status message and is left working (the
  executor returns without ending it; the SDK answers the task as it stands).
* `/fail` — a Task that fails: `working`, then `failed` with the status text `No stock for <text>`;
  `/reject` the same, `rejected` with `I only sell shoes`.
* `/ask` — a Task that needs input: `input-required` with the status text `Which order, <text>?`.
* `/refuse` — the executor raises UnsupportedOperationError(`refunds are not supported`): a
  JSON-RPC error -32004.
* `/break` — streams one artifact chunk (`Partial`), then the agent raises (`the shop went down`):
  a JSON-RPC error -32603, in the stream as an SSE `error` event.
* `/later` — a Task that stays `working` until the server has been asked after it (`GetTask`,
  `tasks/get`) twice, then says the artifact `Later: <text>` and completes; with `at_once` the
  server answers the message before that, as the task stands.

The agent card (`/.well-known/agent-card.json`, named `Shoe Shop` version `2.4.1`) names the
versions of `card`: "both" (1.0 and 0.3 interfaces; the SDK adds the legacy top-level
`protocolVersion: 0.3`), "1.0", "0.3", or "none" (no card: 404), served at `card_path`. Switches for
what real deployments do: `modern=False` takes the SDK dispatcher's 1.0 methods away, so
`SendMessage` is answered as an a2a-sdk 0.3 server answers it (-32601 method not found);
`legacy=False` turns the 0.3 layer off; `strip=True` puts a proxy in front that drops the
`A2A-Version` header (the SDK then answers a 1.0 request -32009 version not supported); `bearer`
makes every request but `POST /oauth/token` (which hands that bearer out, OAuth2 client credentials)
need it, else 401; `gather` holds the first `gather` 1.0 requests until all of them arrived, so they
are refused together; `at_once` asks the SDK to answer each message at once (`returnImmediately` in
1.0, `blocking: false` in 0.3), as fasta2a and agno's background runs do; `bad_request` answers a
1.0 method as agno's 0.3-only A2A server (FastAPI) does: HTTP 400 whose detail names the method.

Every request is recorded as Seen (path, headers, JSON body); every message an agent acted on as
Heard (its path, the text, the contextId and the task id the SDK gave it)."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Self

from a2a.helpers import new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Message, Part
from a2a.utils.errors import UnsupportedOperationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from tests.servers.asgi import Served

AGENTS = ("message", "task", "quiet", "fail", "reject", "ask", "refuse", "break", "later")
NAME = "Shoe Shop"
VERSION = "2.4.1"
MODERN = ("SendMessage", "SendStreamingMessage")
POLLS = ("GetTask", "tasks/get")
SENDS = ("SendMessage", "message/send")
BAD_REQUEST = (
    "Invalid A2A request: 1 validation error for SendMessageRequest\nmethod\n  Input should be "
    "'message/send' [type=literal_error, input_value='{}', input_type=str]"
)
"""agno's detail for a request of a method it does not serve (pydantic's error on `method`)."""
Cards = Literal["both", "1.0", "0.3", "none"]


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    path: str
    headers: dict[str, str]
    body: Any

    @property
    def method(self) -> str:
        return self.body.get("method", "") if isinstance(self.body, dict) else ""

    @property
    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = self.body["params"]["message"]
        return message


@dataclass(frozen=True)
class Heard:
    """One message an agent acted on."""

    path: str
    text: str
    context: str
    task: str


class Shop(AgentExecutor):
    """The agent at one path (one of AGENTS)."""

    def __init__(self, name: str, heard: list[Heard], requests: list[Seen]) -> None:
        self.name = name
        self.heard = heard
        self.requests = requests

    async def asked_after(self, times: int) -> None:
        """Until the server was asked after a task `times` times (20 s at most)."""
        deadline = time.monotonic() + 20
        while sum(seen.method in POLLS for seen in self.requests) < times and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        message = context.message
        if message is None:
            raise ValueError("no message")
        task = context.current_task or new_task_from_user_message(message)
        self.heard.append(Heard(self.name, text, task.context_id, task.id))
        if self.name == "message":
            answer = new_text_message(f"echo: {text}", context_id=task.context_id)
            answer.parts.append(Part(text="Anything else?"))
            await event_queue.enqueue_event(answer)
            return
        if self.name == "refuse":
            raise UnsupportedOperationError(message="refunds are not supported")
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work(said(updater, f'Looking into "{text}"…'))
        match self.name:
            case "task":
                await updater.start_work(said(updater, "Almost there…"))
                await updater.add_artifact([Part(text="You said")], artifact_id="answer", name="answer")
                await updater.add_artifact([Part(text=": ")], artifact_id="answer", append=True)
                await updater.add_artifact(
                    [Part(text=text)], artifact_id="answer", append=True, last_chunk=True
                )
                await updater.complete(said(updater, "Done."))
            case "quiet":
                return
            case "later":
                await self.asked_after(2)
                await updater.add_artifact([Part(text=f"Later: {text}")], artifact_id="answer")
                await updater.complete()
            case "fail":
                await updater.failed(said(updater, f"No stock for {text}"))
            case "reject":
                await updater.reject(said(updater, "I only sell shoes"))
            case "ask":
                await updater.requires_input(said(updater, f"Which order, {text}?"))
            case _:
                await updater.add_artifact([Part(text="Partial")], artifact_id="answer")
                await asyncio.sleep(0.05)
                raise RuntimeError("the shop went down")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise UnsupportedOperationError(message="nothing to cancel")


def immediate(request: dict[str, Any]) -> dict[str, Any]:
    """A SendMessage (`message/send`) request asking to be answered at once, the task as it stands."""
    setting = {"returnImmediately": True} if request["method"] == "SendMessage" else {"blocking": False}
    params = request["params"]
    return {**request, "params": {**params, "configuration": {**params.get("configuration", {}), **setting}}}


def said(updater: TaskUpdater, text: str) -> Message:
    """A status message of the agent's."""
    return updater.new_agent_message([Part(text=text)])


class LegacyOnly(JsonRpcDispatcher):
    """The SDK's dispatcher without its 1.0 methods: `SendMessage` is -32601 method not found, as an
    a2a-sdk 0.3 server answers it; the 0.3 methods are still served by the compatibility layer."""

    METHOD_TO_MODEL: ClassVar[dict[str, type]] = {}


@dataclass
class A2aAgent:
    """A running A2A agent; `url` is its base address (`url/<agent>` one agent's endpoint). Use
    with `with`."""

    card: Cards = "both"
    modern: bool = True
    legacy: bool = True
    strip: bool = False
    bearer: str = ""
    gather: int = 0
    at_once: bool = False
    bad_request: bool = False
    card_path: str = "/.well-known/agent-card.json"
    requests: list[Seen] = field(default_factory=list)
    heard: list[Heard] = field(default_factory=list)
    _served: Served | None = None
    _gathered: list[str] = field(default_factory=list)
    _app: Starlette | None = None

    @property
    def url(self) -> str:
        return self._served.url if self._served is not None else ""

    def agent_card(self) -> AgentCard:
        versions = {"both": ("1.0", "0.3"), "1.0": ("1.0",), "0.3": ("0.3",), "none": ()}[self.card]
        return AgentCard(
            name=NAME,
            description="Sells shoes, answers about orders.",
            version=VERSION,
            supported_interfaces=[
                AgentInterface(url=f"{self.url}/message", protocol_binding="JSONRPC", protocol_version=number)
                for number in versions
            ],
            capabilities=AgentCapabilities(streaming=True),
            default_input_modes=["text/plain"],
            default_output_modes=["text/plain"],
            skills=[
                AgentSkill(id="orders", name="Orders", description="Answers about orders", tags=["orders"])
            ],
        )

    def routes(self) -> list[BaseRoute]:
        card = self.agent_card()
        routes: list[BaseRoute] = [Route("/oauth/token", self.token, methods=["POST"])]
        if self.card != "none":
            routes += create_agent_card_routes(card, card_url=self.card_path)
        for name in AGENTS:
            handler = DefaultRequestHandler(Shop(name, self.heard, self.requests), InMemoryTaskStore(), card)
            if self.modern:
                routes += create_jsonrpc_routes(handler, f"/{name}", enable_v0_3_compat=self.legacy)
            else:
                dispatcher = LegacyOnly(request_handler=handler, enable_v0_3_compat=self.legacy)
                routes.append(Route(f"/{name}", dispatcher.handle_requests, methods=["POST"]))
        return routes

    async def token(self, request: Request) -> Response:
        return JSONResponse({"access_token": self.bearer, "expires_in": 3600, "token_type": "Bearer"})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Every request recorded (and, as switched, refused without the bearer, its A2A-Version
        dropped, or held until `gather` 1.0 requests arrived) before the SDK's app answers it."""
        app = self._app
        if app is None:
            raise RuntimeError("the agent is not started")
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {name.decode().lower(): value.decode() for name, value in scope["headers"]}
        try:
            seen = Seen(scope["path"], headers, json.loads(body) if body else None)
        except json.JSONDecodeError:
            seen = Seen(scope["path"], headers, body.decode())
        self.requests.append(seen)
        if (
            self.bearer
            and scope["path"] != "/oauth/token"
            and headers.get("authorization") != f"Bearer {self.bearer}"
        ):
            await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
            return
        if self.bad_request and seen.method in MODERN:
            detail = BAD_REQUEST.format(seen.method)
            await JSONResponse({"detail": detail}, status_code=400)(scope, receive, send)
            return
        if self.at_once and seen.method in SENDS:
            body = json.dumps(immediate(seen.body)).encode()
        if self.strip:
            scope = {**scope, "headers": [(n, v) for n, v in scope["headers"] if n.lower() != b"a2a-version"]}
        if seen.method in MODERN and len(self._gathered) < self.gather:
            await self.gathered(seen.method)
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return dict(await receive())
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, replay, send)

    async def gathered(self, method: str) -> None:
        self._gathered.append(method)
        deadline = time.monotonic() + 20
        while len(self._gathered) < self.gather and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    def __enter__(self) -> Self:
        self._served = Served(self)
        self._served.start()
        self._app = Starlette(routes=self.routes())  # the card names the address the server got
        return self

    def __exit__(self, *exc: object) -> None:
        if self._served is not None:
            self._served.stop()

    def seen(self, path: str) -> list[Seen]:
        """The JSON-RPC requests to one agent (`/task`...), in order."""
        return [seen for seen in self.requests if seen.path == path]
