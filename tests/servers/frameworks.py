"""FrameworkServer: a real ASGI agent (Starlette, served by uvicorn on a free loopback port) whose
routes demand what agent frameworks' own servers demand, and refuse as they refuse. Every answer
echoes the user's latest message: `echo: <message>`, with ` (turn N)` where the server keeps the
conversation and ` (N user messages)` where the request carries the history.

* A form API (agno AgentOS's `/agents/{id}/runs`): `POST /agents/{id}/runs` takes only an
  application/x-www-form-urlencoded body (else 422 `message Field required`): `message`, `stream`
  (must be `false`), `user_id`, and `session_id` — absent on a conversation's first turn (a new
  session is made and its id answered), else a session it made (`""` is refused with 422: it would
  share one session across conversations). → `{"run_id", "session_id", "content"}`.
* An AG-UI run (`RunAgentInput`): `POST /ag-ui` JSON `{threadId, runId, messages, state, tools,
  context, forwardedProps}`; each message needs an `id` (422 `messages,0,id Field required`);
  a `runId` used before is refused (409), and so is a message id used before for another message
  (409), or twice in one request. → SSE of AG-UI events in data only (`RUN_STARTED`,
  `TEXT_MESSAGE_START`, `TEXT_MESSAGE_CONTENT` with `delta`, `TEXT_MESSAGE_END`, `RUN_FINISHED`).
* A Vercel AI SDK UI chat: `POST /ui/chat` JSON `{id, messages: [{id, role, parts: [{type: text,
  text}]}], trigger}` with the same id rules → a UI message stream (`start`, `text-start`,
  `text-delta` with `delta`, `text-end`, `finish`, then `[DONE]`).
* LangGraph `messages-tuple` with a tool: `POST /graph/stream` (`{"input": {"messages"}}`) → SSE
  `event: metadata`, then `event: messages` whose data `[chunk, metadata]` are the user's message
  echoed (`type: human`), an `AIMessageChunk` with a tool call and no text, the tool's message
  (`type: tool`, `status: shipped on Monday`), then the answer in `AIMessageChunk` pieces.
* Google ADK `api_server`: `POST /apps/{app}/users/{user}/sessions` → `{"id"}`; `POST /run`
  (`{appName, userId, sessionId, newMessage: {role, parts: [{text}]}}`, 404 for a session it did
  not make) → a list of events: a function call, its response, then the answer's text (at
  `-1.content.parts.0.text`); `DELETE /apps/{app}/users/{user}/sessions/{id}` → 204.

Every request is recorded as Seen (method, path, headers, body as sent, its fields or JSON)."""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Self
from urllib.parse import parse_qs

from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.servers.asgi import Served
from tests.servers.threads import pieces

FORM = "application/x-www-form-urlencoded"
TOOL_TEXT = "status: shipped on Monday"


@dataclass
class Seen:
    """One request as the server received it: `body` its JSON or form fields, `raw` its bytes."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    status: int = 0


def refused(status: int, detail: object) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


def missing(*where: object) -> JSONResponse:
    """FastAPI's 422 for a missing field."""
    return refused(422, [{"type": "missing", "loc": list(where), "msg": "Field required"}])


@dataclass
class FrameworkServer:
    """A running server; `url` is its base address. Use with `with`."""

    requests: list[Seen] = field(default_factory=list)
    sessions: dict[str, list[str]] = field(default_factory=dict)
    """Each session the server made, with what was said in it."""
    runs: set[str] = field(default_factory=set)
    messages: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Each message id seen, with the role and text it was first sent with."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        routes = [
            Route("/agents/{agent}/runs", self.form_run, methods=["POST"]),
            Route("/ag-ui", self.ag_ui, methods=["POST"]),
            Route("/ui/chat", self.ui_chat, methods=["POST"]),
            Route("/graph/stream", self.graph, methods=["POST"]),
            Route("/apps/{app}/users/{user}/sessions", self.adk_session, methods=["POST"]),
            Route("/apps/{app}/users/{user}/sessions/{id}", self.adk_end, methods=["DELETE"]),
            Route("/run", self.adk_run, methods=["POST"]),
        ]
        self._served = Served(self.recorded(Starlette(routes=routes)))

    @property
    def url(self) -> str:
        return self._served.url

    def __enter__(self) -> Self:
        self._served.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._served.stop()

    def seen(self, path: str) -> list[Seen]:
        with self._lock:
            return [one for one in self.requests if one.path == path]

    def recorded(self, app: Starlette) -> Any:
        server = self

        async def record(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            chunks: list[bytes] = []
            more = True
            while more:
                message = await receive()
                chunks.append(message.get("body", b""))
                more = message.get("more_body", False)
            raw = b"".join(chunks)
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            kind = headers.get("content-type", "").partition(";")[0]
            body: Any = {k: v[0] for k, v in parse_qs(raw.decode()).items()} if kind == FORM else None
            if kind == "application/json":
                body = json.loads(raw or b"null")
            seen = Seen(scope["method"], scope["path"], headers, body, raw)
            with server._lock:
                server.requests.append(seen)
            sent = False

            async def replay() -> dict[str, Any]:
                nonlocal sent
                if sent:
                    return {"type": "http.disconnect"}
                sent = True
                return {"type": "http.request", "body": raw, "more_body": False}

            async def status(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    seen.status = message["status"]
                await send(message)

            await app(scope, replay, status)

        return record

    def new_session(self) -> str:
        id = f"s-{secrets.token_hex(6)}"
        with self._lock:
            self.sessions[id] = []
        return id

    def said(self, session: str, text: str) -> int:
        with self._lock:
            self.sessions[session].append(text)
            return len(self.sessions[session])

    # agno AgentOS: a form body

    async def form_run(self, request: Request) -> Response:
        if request.headers.get("content-type", "").partition(";")[0] != FORM:
            return missing("body", "message")
        fields = {
            k: v[0] for k, v in parse_qs((await request.body()).decode(), keep_blank_values=True).items()
        }
        if "message" not in fields:
            return missing("body", "message")
        if fields.get("stream") != "false":
            return refused(400, "this route answers only with stream=false")
        session = fields.get("session_id")
        if session == "":
            return refused(422, "session_id must not be empty: leave it out for a new session")
        if session is None:
            session = self.new_session()
        elif session not in self.sessions:
            return refused(404, f"no session {session}")
        turn = self.said(session, fields["message"])
        content = f"echo: {fields['message']} (turn {turn})"
        return JSONResponse({"run_id": secrets.token_hex(4), "session_id": session, "content": content})

    # AG-UI and the Vercel AI SDK: ids for every message and run

    def checked(self, messages: Any, text: str = "content") -> Response | list[tuple[str, str]]:
        """The messages as (role, text), or the refusal: an id missing, repeated in the request, or
        used before for another message."""
        if not isinstance(messages, list):
            return missing("body", "messages")
        found: list[tuple[str, str]] = []
        ids: set[str] = set()
        for index, message in enumerate(messages):
            if not isinstance(message, dict) or not isinstance(message.get("id"), str) or not message["id"]:
                return missing("body", "messages", index, "id")
            said = message.get(text)
            if text == "parts":
                said = "".join(p.get("text", "") for p in said or [] if p.get("type") == "text")
            pair = (str(message.get("role")), str(said))
            with self._lock:
                before = self.messages.setdefault(message["id"], pair)
            if message["id"] in ids or before != pair:
                return refused(409, f"message id {message['id']} was used for another message")
            ids.add(message["id"])
            found.append(pair)
        return found

    def echo(self, said: list[tuple[str, str]]) -> str:
        users = [text for role, text in said if role == "user"]
        return f"echo: {users[-1] if users else ''} ({len(users)} user messages)"

    async def ag_ui(self, request: Request) -> Response:
        body = await request.json()
        for key in ("threadId", "runId", "messages", "state", "tools", "context", "forwardedProps"):
            if key not in body:
                return missing("body", key)
        with self._lock:
            if body["runId"] in self.runs:
                return refused(409, f"run {body['runId']} was run already")
            self.runs.add(body["runId"])
        said = self.checked(body["messages"])
        if isinstance(said, Response):
            return said
        answer, id = self.echo(said), secrets.token_hex(4)

        async def events() -> AsyncIterator[dict[str, str]]:
            yield {"data": json.dumps({"type": "RUN_STARTED", "threadId": body["threadId"]})}
            yield {"data": json.dumps({"type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant"})}
            for piece in pieces(answer):
                yield {"data": json.dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": piece})}
            yield {"data": json.dumps({"type": "TEXT_MESSAGE_END", "messageId": id})}
            yield {"data": json.dumps({"type": "RUN_FINISHED", "runId": body["runId"]})}

        return EventSourceResponse(events())

    async def ui_chat(self, request: Request) -> Response:
        body = await request.json()
        said = self.checked(body.get("messages"), text="parts")
        if isinstance(said, Response):
            return said
        answer, id = self.echo(said), secrets.token_hex(4)

        async def events() -> AsyncIterator[dict[str, str]]:
            yield {"data": json.dumps({"type": "start", "messageId": id})}
            yield {"data": json.dumps({"type": "text-start", "id": id})}
            for piece in pieces(answer):
                yield {"data": json.dumps({"type": "text-delta", "id": id, "delta": piece})}
            yield {"data": json.dumps({"type": "text-end", "id": id})}
            yield {"data": json.dumps({"type": "finish"})}
            yield {"data": "[DONE]"}

        return EventSourceResponse(events())

    # LangGraph messages-tuple, with a tool

    async def graph(self, request: Request) -> Response:
        body = await request.json()
        messages = body.get("input", {}).get("messages", [])
        text = messages[-1]["content"] if messages else ""
        meta = {"langgraph_node": "agent"}
        call = {"name": "lookup_order", "args": '{"order": "4411"}', "id": "call-1", "index": 0}

        async def events() -> AsyncIterator[dict[str, str]]:
            yield {"event": "metadata", "data": json.dumps({"run_id": secrets.token_hex(4)})}
            yield {"event": "messages", "data": json.dumps([{"type": "human", "content": text}, meta])}
            chunk = {"type": "AIMessageChunk", "content": "", "tool_call_chunks": [call]}
            yield {"event": "messages", "data": json.dumps([chunk, meta])}
            tool = {"type": "tool", "content": TOOL_TEXT, "name": "lookup_order"}
            yield {"event": "messages", "data": json.dumps([tool, {"langgraph_node": "tools"}])}
            for piece in pieces(f"echo: {text}"):
                yield {
                    "event": "messages",
                    "data": json.dumps([{"type": "AIMessageChunk", "content": piece}, meta]),
                }

        return EventSourceResponse(events())

    # Google ADK api_server

    async def adk_session(self, request: Request) -> Response:
        id = self.new_session()
        return JSONResponse(
            {"id": id, "appName": request.path_params["app"], "userId": request.path_params["user"]}
        )

    async def adk_end(self, request: Request) -> Response:
        with self._lock:
            gone = self.sessions.pop(request.path_params["id"], None)
        return Response(status_code=204 if gone is not None else 404)

    async def adk_run(self, request: Request) -> Response:
        body = await request.json()
        session = body.get("sessionId")
        if session not in self.sessions:
            return refused(404, "Session not found")
        text = body["newMessage"]["parts"][0]["text"]
        turn = self.said(session, text)
        call = {"functionCall": {"name": "lookup_order", "args": {"order": "4411"}}}
        result = {"functionResponse": {"name": "lookup_order", "response": {"status": "shipped"}}}
        return JSONResponse(
            [
                {"author": "support", "content": {"role": "model", "parts": [call]}},
                {"author": "support", "content": {"role": "user", "parts": [result]}},
                {
                    "author": "support",
                    "content": {"role": "model", "parts": [{"text": f"echo: {text} (turn {turn})"}]},
                },
            ]
        )
