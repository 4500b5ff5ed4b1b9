"""ThreadServer: a real ASGI agent (Starlette, served by uvicorn in a thread of its own on a free
loopback port) behaving like the agents teams deploy, with real cookies. Every answer echoes the
user's latest message: `echo: <message>` (with ` (turn N)` where the server keeps the dialogue).

* LangGraph-style threads: `POST /threads` → `{"thread_id"}` and a `sid` cookie;
  `POST /threads/{id}/runs` (also `/runs/wait`) → the thread's state `{"messages": [...]}` (the
  answer at `messages.-1.content`, its tokens at `messages.-1.usage_metadata.*`);
  `POST /threads/{id}/runs/stream` → SSE in the body's `stream_mode` (`values`: snapshots of the
  whole state, the answer growing; `messages-tuple`: `event: messages`, data `[chunk, metadata]`);
  `DELETE /threads/{id}` → 204 (500 with an error body when `delete_fails`). A start answers 500
  `{"detail": "thread store is down"}` when `store_down`.
* A header session: `POST /sessions` → the id in the response header `X-Session-Id` (and a
  cookie); `POST /sessions/turn` needs it back in that header → `{"reply": {"text"}}`.
* A first-answer id: `POST /chat` (`{"message", "conversation_id"}`) issues `conversation_id` (and
  a cookie) in its first answer (`{"conversation_id", "answer"}`); a later turn without it is 400.
  `POST /chat/stream` the same as SSE: a `metadata` event with the id, then text deltas.
* Cookies: a turn of a thread, session or chat without the cookie its start set is 401; with
  another conversation's cookie 403 — both with an error body.
* Streams, each echoing the latest message of `{"message"}`, `{"input": {"messages"}}` or
  `{"messages"}`: `/stream/vercel-named` (Vercel AI SDK UI stream parts with SSE event names:
  `event: text-delta`, data `{"type": "text-delta", "delta"}`, a `reasoning-delta` beside them,
  usage in the `finish` part's `messageMetadata.usage`), `/stream/vercel` (the same, the kind only
  in the data's `type`), `/stream/values` (LangGraph `values` snapshots), `/stream/ndjson`
  (`{"type": "delta", "text"}` lines, then `{"type": "done", "usage": {"in", "out"}}`),
  `/stream/text` (plain text), `/api/chat` (the Vercel AI SDK's usual route, as
  `/stream/vercel-named`); `/api/ask` a plain JSON agent (`{"message"}` → `{"reply": {"text"}}`);
  `/stream/broken?kind=sse|ndjson|text` sends two pieces and drops
  the connection mid-body; `/stream/empty?kind=...` says nothing. Query `wait` delays the answer's
  start, `gap` each piece (seconds).
* OAuth2 client credentials: `POST /oauth/token` (form: grant_type, client_id, client_secret,
  scope, audience) → `{"access_token", "expires_in" (token_life), "token_type"}`, or 401
  `{"error": "invalid_client", "error_description"}` for a wrong secret. With `auth` every agent
  route needs a bearer token it issued and did not revoke (`revoke()`, or the first
  `refused_tokens` it issued), else 401. `/leaky` answers 400 quoting the bearer token it got.

Every request is recorded as Seen (method, path, headers, cookies, body, status)."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import secrets
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Self
from urllib.parse import parse_qs

from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request, cookie_parser
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from tests.servers.asgi import Served

COOKIE = "sid"
Events = AsyncIterator[dict[str, str]]


@dataclass
class Seen:
    """One request as the server received it, and the status it answered."""

    method: str
    path: str
    headers: dict[str, str]
    cookies: dict[str, str]
    body: Any
    status: int = 0


@dataclass
class Kept:
    """A conversation the server keeps (a thread, a session, a chat): its cookie and what was said."""

    id: str
    cookie: str
    said: list[str] = field(default_factory=list)
    deleted: bool = False


def pieces(text: str) -> list[str]:
    """`text` cut into word pieces that join back into it."""
    return re.findall(r"\S+\s*", text) or [text]


def latest(body: Any) -> str:
    """The user's latest message in a request body of any of the shapes served."""
    if not isinstance(body, dict):
        return ""
    for key in ("message", "text"):
        if isinstance(body.get(key), str):
            return str(body[key])
    messages = body.get("messages")
    if isinstance(body.get("input"), dict):
        messages = body["input"].get("messages")
    said = [m.get("content", "") for m in messages or [] if isinstance(m, dict) and m.get("role") == "user"]
    return str(said[-1]) if said else ""


def error(status: int, **said: object) -> JSONResponse:
    return JSONResponse(said, status_code=status)


@dataclass
class ThreadServer:
    """A running agent; `url` is its base address. Use with `with`. The switches may be changed
    while it runs."""

    client_id: str = "convy-ci"
    client_secret: str = "cs-REAL-secret-9f3a7c"  # noqa: S105 (a test credential)
    token_life: float = 3600.0
    auth: bool = False
    basic_only: bool = False
    """The token endpoint takes the client's credentials in HTTP Basic only (client_secret_basic)."""
    store_down: bool = False
    delete_fails: bool = False
    refused_tokens: int = 0
    requests: list[Seen] = field(default_factory=list)
    kept: dict[str, Kept] = field(default_factory=dict)
    issued: list[str] = field(default_factory=list)
    grants: list[dict[str, str]] = field(default_factory=list)
    revoked: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._served = Served(Recorder(self.app(), self))

    @property
    def url(self) -> str:
        return self._served.url

    def __enter__(self) -> Self:
        self._served.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._served.stop()

    def seen(self, path_start: str = "/") -> list[Seen]:
        """The requests whose path starts with `path_start`, in the order they came."""
        with self._lock:
            return [seen for seen in self.requests if seen.path.startswith(path_start)]

    def agent_requests(self) -> list[Seen]:
        """Every request but the token endpoint's."""
        return [seen for seen in self.seen() if seen.path != "/oauth/token"]

    def revoke(self) -> None:
        """Every token issued so far is refused from now on."""
        with self._lock:
            self.revoked.update(self.issued)

    def record(self, seen: Seen) -> None:
        with self._lock:
            self.requests.append(seen)

    def app(self) -> Starlette:
        routes = [
            Route("/threads", self.start_thread, methods=["POST"]),
            Route("/threads/{id}/runs", self.run_thread, methods=["POST"]),
            Route("/threads/{id}/runs/wait", self.run_thread, methods=["POST"]),
            Route("/threads/{id}/runs/stream", self.stream_thread, methods=["POST"]),
            Route("/threads/{id}", self.delete_thread, methods=["DELETE"]),
            Route("/sessions", self.start_session, methods=["POST"]),
            Route("/sessions/turn", self.session_turn, methods=["POST"]),
            Route("/chat", self.chat, methods=["POST"]),
            Route("/chat/stream", self.chat, methods=["POST"]),
            Route("/stream/broken", Broken(self)),
            Route("/stream/{kind}", self.stream, methods=["POST"]),
            Route("/leaky", self.leaky, methods=["POST"]),
            Route("/api/chat", self.api_chat, methods=["POST"]),
            Route("/api/ask", self.ask, methods=["POST"]),
            Route("/oauth/token", self.token, methods=["POST"]),
        ]
        return Starlette(routes=routes)

    # Conversations kept by the server, each with its cookie

    def new(self, prefix: str) -> Kept:
        kept = Kept(id=f"{prefix}-{secrets.token_hex(6)}", cookie=secrets.token_hex(12))
        with self._lock:
            self.kept[kept.id] = kept
        return kept

    def owned(self, request: Request, id: str) -> Kept | Response:
        """The conversation `id` when the request carries its cookie; else the error answer."""
        kept = self.kept.get(id)
        if kept is None or kept.deleted:
            return error(404, detail=f"no conversation {id}")
        cookie = request.cookies.get(COOKIE)
        if not cookie:
            return error(401, detail="no session cookie: start a session first")
        if cookie != kept.cookie:
            return error(403, detail=f"the session cookie belongs to another conversation, not {id}")
        return kept

    def started(self, answer: Response, kept: Kept) -> Response:
        answer.set_cookie(COOKIE, kept.cookie, httponly=True, samesite="lax")
        return answer

    async def guarded(self, request: Request) -> tuple[Any, Response | None]:
        """The request's JSON body, and the 401 answer when its bearer token is not good."""
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not self.auth:
            return body, None
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        with self._lock:
            good = token in self.issued[self.refused_tokens :] and token not in self.revoked
        if good:
            return body, None
        refused = error(401, error="invalid_token", error_description="the access token is not valid")
        refused.headers["WWW-Authenticate"] = 'Bearer error="invalid_token"'
        return body, refused

    async def start_thread(self, request: Request) -> Response:
        body, refused = await self.guarded(request)
        if refused is not None:
            return refused
        if self.store_down:
            return error(500, detail="thread store is down")
        kept = self.new("thread")
        metadata = body.get("metadata", {}) if isinstance(body, dict) else {}
        answer = {
            "thread_id": kept.id,
            "status": "idle",
            "metadata": metadata,
            "user": (body or {}).get("user"),
        }
        return self.started(JSONResponse(answer), kept)

    def said(self, kept: Kept, text: str) -> str:
        kept.said.append(text)
        return f"echo: {text} (turn {len(kept.said)})"

    def state(self, kept: Kept, text: str, answer: str) -> dict[str, object]:
        """A LangGraph thread's state after a turn: every message, the answer's with its usage."""
        messages: list[dict[str, object]] = []
        for n, said in enumerate(kept.said[:-1], start=1):
            messages += [{"type": "human", "content": said}, {"type": "ai", "content": f"(turn {n})"}]
        usage = {"input_tokens": len(text), "output_tokens": len(answer), "total_tokens": len(text + answer)}
        return {
            "messages": [
                *messages,
                {"type": "human", "content": text},
                {"type": "ai", "content": answer, "usage_metadata": usage},
            ]
        }

    async def run_thread(self, request: Request) -> Response:
        body, refused = await self.guarded(request)
        if refused is not None:
            return refused
        kept = self.owned(request, request.path_params["id"])
        if isinstance(kept, Response):
            return kept
        text = latest(body)
        return JSONResponse(self.state(kept, text, self.said(kept, text)))

    async def stream_thread(self, request: Request) -> Response:
        body, refused = await self.guarded(request)
        if refused is not None:
            return refused
        kept = self.owned(request, request.path_params["id"])
        if isinstance(kept, Response):
            return kept
        text = latest(body)
        answer = self.said(kept, text)
        state = self.state(kept, text, answer)
        mode = body.get("stream_mode", "values") if isinstance(body, dict) else "values"
        events = self.values(state) if mode == "values" else self.tuples(answer, len(text))
        return EventSourceResponse(self.paced(events, request))

    async def delete_thread(self, request: Request) -> Response:
        _, refused = await self.guarded(request)
        if refused is not None:
            return refused
        kept = self.owned(request, request.path_params["id"])
        if isinstance(kept, Response):
            return kept
        if self.delete_fails:
            return error(500, detail="the thread could not be deleted: the store is read-only")
        kept.deleted = True
        return Response(status_code=204)

    async def start_session(self, request: Request) -> Response:
        _, refused = await self.guarded(request)
        if refused is not None:
            return refused
        kept = self.new("session")
        return self.started(
            JSONResponse({"ok": True}, status_code=201, headers={"X-Session-Id": kept.id}), kept
        )

    async def session_turn(self, request: Request) -> Response:
        body, refused = await self.guarded(request)
        if refused is not None:
            return refused
        id = request.headers.get("x-session-id", "")
        if not id:
            return error(400, error="the X-Session-Id header is required")
        kept = self.owned(request, id)
        if isinstance(kept, Response):
            return kept
        return JSONResponse({"reply": {"text": self.said(kept, latest(body))}})

    async def chat(self, request: Request) -> Response:
        body, refused = await self.guarded(request)
        if refused is not None:
            return refused
        id = str(body.get("conversation_id") or "") if isinstance(body, dict) else ""
        if not id and request.cookies.get(COOKIE) in {kept.cookie for kept in self.kept.values()}:
            return error(400, detail="conversation_id is required after the first message")
        owned = self.owned(request, id) if id else self.new("conv")
        if isinstance(owned, Response):
            return owned
        answer = self.said(owned, latest(body))
        if request.url.path.endswith("/stream"):
            parts = [{"event": "metadata", "data": json.dumps({"conversation_id": owned.id})}]
            parts += [self.part("text-delta", {"delta": piece}) for piece in pieces(answer)]
            reply: Response = EventSourceResponse(
                self.paced(self.listed([*parts, {"data": "[DONE]"}]), request)
            )
        else:
            reply = JSONResponse({"conversation_id": owned.id, "answer": answer})
        return self.started(reply, owned) if not id else reply

    async def leaky(self, request: Request) -> Response:
        _, refused = await self.guarded(request)
        if refused is not None:
            return refused
        said = request.headers.get("authorization", "")
        return error(400, detail=f"the request with {said} was refused: scope chat.write is missing")

    # Streams

    async def api_chat(self, request: Request) -> Response:
        """The Vercel AI SDK's usual route: its UI message stream, with SSE event names."""
        request.path_params["kind"] = "vercel-named"
        return await self.stream(request)

    async def ask(self, request: Request) -> Response:
        """A plain JSON agent: `{"message"}` in, `{"reply": {"text"}}` out."""
        body, refused = await self.guarded(request)
        if refused is not None:
            return refused
        return JSONResponse({"reply": {"text": f"echo: {latest(body)}"}})

    async def stream(self, request: Request) -> Response:
        body, refused = await self.guarded(request)
        if refused is not None:
            return refused
        kind = request.path_params["kind"]
        answer = f"echo: {latest(body)}"
        match kind:
            case "vercel-named" | "vercel":
                events = self.vercel(answer, len(latest(body)), named=kind == "vercel-named")
                headers = {"x-vercel-ai-ui-message-stream": "v1"}
                return EventSourceResponse(self.paced(events, request), headers=headers)
            case "values":
                state = {"messages": [{"type": "human", "content": latest(body)}]}
                return EventSourceResponse(self.paced(self.values(state, answer), request))
            case "ndjson":
                lines = [{"type": "delta", "text": piece} for piece in pieces(answer)]
                lines.append({"type": "done", "usage": {"in": len(latest(body)), "out": len(answer)}})
                chunks = self.paced(self.listed([json.dumps(line) + "\n" for line in lines]), request)
                return StreamingResponse(chunks, media_type="application/x-ndjson")
            case "text":
                return StreamingResponse(
                    self.paced(self.listed(pieces(answer)), request), media_type="text/plain"
                )
            case "empty":
                return await self.empty(request)
        return error(404, detail=f"no stream {kind}")

    async def empty(self, request: Request) -> Response:
        match request.query_params.get("kind", "sse"):
            case "ndjson":
                return StreamingResponse(
                    self.listed(['{"type": "done"}\n']), media_type="application/x-ndjson"
                )
            case "text":
                return StreamingResponse(self.listed([]), media_type="text/plain")
        parts = [self.part("start", {"messageId": "m1"}), self.part("finish", {}), {"data": "[DONE]"}]
        return EventSourceResponse(self.listed(parts))

    def part(self, kind: str, data: dict[str, object], named: bool = True) -> dict[str, str]:
        """A Vercel AI SDK UI stream part: its `type` in the data, and as the SSE event name if `named`."""
        encoded = json.dumps({"type": kind, **data})
        return {"event": kind, "data": encoded} if named else {"data": encoded}

    async def vercel(self, answer: str, read: int, named: bool) -> Events:
        yield self.part("start", {"messageId": "msg-1"}, named)
        yield {"event": "ping", "data": "keep-alive"} if named else {"data": "keep-alive"}
        yield self.part("reasoning-delta", {"id": "r1", "delta": "Thinking it over. "}, named)
        yield self.part("text-start", {"id": "t1"}, named)
        for piece in pieces(answer):
            yield self.part("text-delta", {"id": "t1", "delta": piece}, named)
        yield self.part("text-end", {"id": "t1"}, named)
        usage = {"usage": {"inputTokens": read, "outputTokens": len(answer)}}
        yield self.part("finish", {"messageMetadata": usage}, named)
        yield {"data": "[DONE]"}

    async def values(self, state: dict[str, Any], answer: str = "") -> Events:
        """LangGraph's `values` mode: the run's metadata, then the whole state after each step, the
        answer growing (from `state`'s last message when `answer` is not given)."""
        yield {"event": "metadata", "data": json.dumps({"run_id": secrets.token_hex(8), "attempt": 1})}
        messages: list[dict[str, Any]] = list(state["messages"])
        last = {"type": "ai", "content": answer} if answer else messages.pop()
        yield {"event": "values", "data": json.dumps({"messages": messages})}
        so_far = ""
        for piece in pieces(str(last["content"])):
            so_far += piece
            yield {
                "event": "values",
                "data": json.dumps({"messages": [*messages, {**last, "content": so_far}]}),
            }

    async def tuples(self, answer: str, read: int) -> Events:
        """LangGraph's `messages-tuple` mode: `[chunk, metadata]` for each piece of the answer."""
        yield {"event": "metadata", "data": json.dumps({"run_id": secrets.token_hex(8)})}
        chunks = pieces(answer)
        for n, piece in enumerate(chunks, start=1):
            chunk: dict[str, object] = {"type": "AIMessageChunk", "content": piece}
            if n == len(chunks):
                chunk["usage_metadata"] = {"input_tokens": read, "output_tokens": len(answer)}
            yield {"event": "messages", "data": json.dumps([chunk, {"langgraph_node": "agent"}])}

    async def listed(self, items: list[Any]) -> AsyncIterator[Any]:
        for item in items:
            yield item

    async def paced(self, items: AsyncIterator[Any], request: Request) -> AsyncIterator[Any]:
        """`items`, each after the request's `gap` seconds."""
        gap = float(request.query_params.get("gap", "0"))
        async for item in items:
            if gap:
                await asyncio.sleep(gap)
            yield item

    # OAuth2

    async def token(self, request: Request) -> Response:
        form = {key: str(value) for key, value in (await request.form()).items()}
        basic = request.headers.get("authorization", "")
        with self._lock:
            self.grants.append({**form, **({"basic": basic} if basic else {})})
        if self.basic_only:
            if "client_secret" in form or not basic.startswith("Basic "):
                return error(401, error="invalid_client", error_description="use HTTP Basic")
            client, _, secret = base64.b64decode(basic.removeprefix("Basic ")).decode().partition(":")
            form = {**form, "client_id": client, "client_secret": secret}
        if form.get("grant_type") != "client_credentials":
            return error(400, error="unsupported_grant_type", error_description="only client_credentials")
        if form.get("client_id") != self.client_id or form.get("client_secret") != self.client_secret:
            description = (
                f"Client authentication failed: the secret {form.get('client_secret', '')} "
                f"is not the one of client {form.get('client_id', '')}"
            )
            return error(401, error="invalid_client", error_description=description)
        with self._lock:
            token = f"at-{len(self.issued) + 1}-{secrets.token_hex(12)}"
            self.issued.append(token)
        return JSONResponse({"access_token": token, "expires_in": self.token_life, "token_type": "Bearer"})


class Broken:
    """`/stream/broken`: an answer that starts (as `kind`), sends two pieces, and stops without
    ending its chunked body — the connection is dropped, as when the agent's worker dies."""

    def __init__(self, server: ThreadServer) -> None:
        self._server = server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = parse_qs(scope["query_string"].decode()).get("kind", ["sse"])[0]
        types = {"sse": "text/event-stream", "ndjson": "application/x-ndjson", "text": "text/plain"}
        chunks = {
            "sse": [b'event: text-delta\ndata: {"type": "text-delta", "delta": "echo: "}\n\n'] * 2,
            "ndjson": [b'{"type": "delta", "text": "echo: "}\n'] * 2,
            "text": [b"echo: "] * 2,
        }[kind]
        headers = [(b"content-type", types[kind].encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        # returning without the last body message: the server drops the connection mid-body


class Recorder:
    """The app with every request recorded (as Seen, with the status it answered) and the query
    `wait` (seconds) waited before it is answered."""

    def __init__(self, app: Starlette, server: ThreadServer) -> None:
        self._app = app
        self._server = server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        headers = {name.decode().lower(): value.decode() for name, value in scope["headers"]}
        seen = Seen(
            scope["method"], scope["path"], headers, cookie_parser(headers.get("cookie", "")), decoded(body)
        )
        self._server.record(seen)
        wait = parse_qs(scope["query_string"].decode()).get("wait", ["0"])[0]
        if float(wait):
            await asyncio.sleep(float(wait))
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen.status = message["status"]
            await send(message)

        await self._app(scope, replay, sending)


def decoded(body: bytes) -> Any:
    """A request body: its JSON, else its form fields, else its text."""
    try:
        return json.loads(body) if body else None
    except ValueError:
        fields = parse_qs(body.decode(errors="replace"))
        return {key: values[0] for key, values in fields.items()} if fields else body.decode(errors="replace")
