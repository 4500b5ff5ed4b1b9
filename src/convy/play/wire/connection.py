"""One conversation with a declarative HTTP agent over one kept connection and a cookie jar of its
own: its session started when it opens and ended when it closes, each turn's request made by the
agent's dialect, its answer read whole or as a stream, the OAuth2 token renewed once after a 401.

A refusal (HTTP 429 or 503) is Busy; any other error is an AgentFailure, never retried here (retries
live in Places), so the agent never gets the same message twice; either carries the agent's own
words — from its error body, a streamed error event, its session's answer — and every one that
leaves a conversation has the agent's secrets masked here, by the one rule of Masked, whichever
path made it."""

from __future__ import annotations

import contextlib
import ssl
import time
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Self

import httpx
import msgspec
from httpx_sse import SSEError

from convy.play.agent import AgentFailure, Answer, Message, SessionNotEnded
from convy.play.busy import Busy, Hints
from convy.play.errorbody import ErrorBody, Masked
from convy.play.keptclient import ADDRESSES
from convy.play.outcome import SpanKind
from convy.play.placeholders import Placeholders
from convy.play.trace import MESSAGE_IDS, TraceContext
from convy.play.unreached import ConnectProblem
from convy.play.wire.dialect import Ask, Pending, Resend
from convy.play.wire.encoding import Encoded
from convy.play.wire.line import Line
from convy.play.wire.polling import Polling
from convy.play.wire.preset import WrongServer
from convy.play.wire.reading import (
    MOST_BYTES,
    MOST_RAW,
    AgentReply,
    Found,
    Limited,
    Relocated,
    Spoken,
    Undecodable,
)
from convy.play.wire.session import Quoted, Received, SessionCalls
from convy.play.wire.stream import Chunks, Events

REFUSAL_BYTES = 64 * 1024
"""How much of a refusal's body (429, 503) is read, so the connection can be kept for the retry."""
ACCEPT = {
    "none": "application/json",
    "sse": "text/event-stream",
    "ndjson": "application/x-ndjson, application/json",
    "text": "text/plain, */*",
}


class JsonConnection:
    """One conversation with a JsonAgent, identified by `key` (its `$conversation`): opening it
    takes a client with one HTTP/1.1 connection, kept for all its turns and never shared with
    another conversation at the same time, its cookies cleared; closing it gives the client back
    (Handover).

    It keeps the dialogue so far, the agent's session id and what the last answer carries on: a
    turn adds to them only once the agent answered, so a turn refused with Busy (429, 503) can be
    sent again as it was."""

    def __init__(self, agent: Line, key: str) -> None:
        self._agent = agent
        self._key = key
        self._client: httpx.AsyncClient | None = None
        self._history: list[Message] = []
        self._session = ""
        self._carry = ""
        self._ids: list[str] = []
        """The id of each message of the dialogue (`$message_id`), in order."""
        self._asked = ""
        """The id of the user's message being sent: kept until it is answered, so a refused turn
        is sent again with the same id."""
        self._shown = agent.shown
        """The URL of the latest turn as errors show it: its placeholders filled in."""

    @property
    def shown(self) -> str:
        return self._shown

    @property
    def masked(self) -> Masked:
        """The agent's secrets (header values, their tokens, the OAuth2 secret and tokens)."""
        return self._agent.masked()

    @property
    def calls(self) -> SessionCalls:
        return SessionCalls(self._agent.spec.session, self._key, self._session, self.masked)

    async def __aenter__(self) -> Self:
        self._client = self._agent.handover.client(self._agent.client)
        self._client.cookies.clear()
        start = self._agent.spec.session.start
        if start.given:
            try:
                received = await self.received(self.calls.start_request(), "session_failed", "session_start")
                self._session = self.calls.started(received)
            except RecursionError:
                await self.let_go()
                shown = self._agent.shown_url(start.url)
                raise AgentFailure(
                    "session_failed", f"the session start at {shown} answered JSON nested too deeply"
                ) from None
            except AgentFailure as failure:
                await self.let_go()
                said = WrongServer(self._agent.spec.protocol).failure(failure)
                raise said.hiding(self.masked) from None
            except Busy as busy:
                await self.let_go()
                raise busy.hiding(self.masked) from None
            except BaseException:
                await self.let_go()
                raise
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        end = self._agent.spec.session.end
        problem = ""
        if end.given and self._client is not None and not self.calls.needless(end):
            try:
                received = await self.received(self.calls.end_request(), "session_end", "session_end")
                problem = self.calls.ended(received)
            except AgentFailure as failure:
                problem = failure.detail or failure.reason
            except Busy as busy:
                problem = str(busy)
        await self.let_go()
        if problem and kind is None:
            raise SessionNotEnded(self.masked.text(problem))

    async def let_go(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            # a connection the agent's side broke (a TLS alert, a reset) may fail to close cleanly:
            # the turn already failed or succeeded on its own, so closing raises nothing
            with contextlib.suppress(ssl.SSLError, OSError, httpx.HTTPError):
                await self._agent.handover.give(client)

    def headers(
        self,
        accept: str = "application/json",
        spoken: Mapping[str, str] | None = None,
        placeholders: Placeholders | None = None,
    ) -> httpx.Headers:
        """A request's headers: the agent file's (placeholders filled in, a turn's or the
        session's; a header of the session left out until it is known — its start, a first turn)
        over the protocol's (`spoken`) over convy's own."""
        headers = self._agent.headers.copy()
        headers["Accept"] = accept
        headers.update(spoken or {})
        filling = placeholders or self.calls.placeholders
        for name, value in self._agent.spec.headers.items():
            if "$" in value:
                if filling.unknown_session(value):
                    continue
                value = filling.text(value, escapes=False)
            headers[name] = value
        return headers

    async def reply(self, text: str) -> Answer:
        if self._client is None:
            raise RuntimeError("open the conversation with `async with` before its first turn")
        asked = Message(role="user", content=text)
        self._asked = self._asked or MESSAGE_IDS.fresh()
        ask = Ask(
            dialogue=(*self._history, asked),
            message=text,
            conversation=self._key,
            session=self._session,
            carry=self._carry,
            turn=len(self._history) // 2 + 1,
            ids=(*self._ids, self._asked),
        )
        try:
            try:
                reply, data = await self.turn(ask)
            except Resend:
                reply, data = await self.turn(ask)
        except RecursionError:  # msgspec decodes and encodes recursively: JSON nested too deep to read
            raise AgentFailure("bad_answer", f"the answer from {self.shown} is nested too deeply") from None
        except AgentFailure as failure:
            raise Relocated(self._agent.shown, self.shown).failure(failure).hiding(self.masked) from None
        except Busy as busy:
            raise busy.hiding(self.masked) from None
        answer = Spoken(reply.answer, self.shown).checked()
        session = self._agent.spec.session
        if session.id and not self._session:
            found = Found(session.id).value(data)
            if isinstance(found, str | int) and not isinstance(found, bool):
                self._session = str(found)
        self._history += [asked, Message(role="assistant", content=answer.text)]
        self._ids += [self._asked, MESSAGE_IDS.fresh()]
        self._asked = ""
        self._carry = reply.carry or self._carry
        return answer

    async def turn(self, ask: Ask) -> tuple[AgentReply, object]:
        """One turn's request and its answer, with the JSON its session id may be read from."""
        agent = self._agent
        dialect = agent.dialect
        placeholders = ask.placeholders()
        url = placeholders.text(agent.spec.url, quoted=Quoted().text)
        self._shown = agent.shown_url(url)
        sent_body = dialect.body(ask)
        body = Encoded(sent_body, agent.spec.format)
        spoken = {"Content-Type": body.content_type, **dialect.headers()}
        headers = self.headers(ACCEPT[agent.spec.streamed], spoken, placeholders)
        started = agent.clock.now()
        try:
            return await self.asked(url, headers, body.content())
        except AgentFailure as failure:
            agent.turned_down(failure, sent_body)
            raise
        except Pending as pending:
            asking = {"Content-Type": "application/json", **dialect.headers()}
            polled = self.headers(ACCEPT["none"], asking, placeholders)
            polls = Polling(agent.clock, agent.patience, self._shown)
            return await polls.answer(
                pending, started, lambda asked: self.asked(url, polled, msgspec.json.encode(asked))
            )

    async def asked(self, url: str, headers: httpx.Headers, content: bytes) -> tuple[AgentReply, object]:
        """One request of a turn (`content` its body as sent) and its answer."""
        sent = time.monotonic()
        async with self.streamed("POST", url, content, headers, kind="turn") as response:
            return await self.read(response, sent)

    async def read(self, response: httpx.Response, sent: float) -> tuple[AgentReply, object]:
        """The answer of a 2xx response: whole JSON, or folded as it streams (its time to first
        token counted from `sent`, when the request was sent)."""
        dialect = self._agent.dialect
        stream = self._agent.spec.streamed
        kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if stream == "none" or (stream != "text" and kind == "application/json"):
            content = await Limited(MOST_BYTES).read(response)
            if content is None:
                raise AgentFailure("answer_too_large", f"the answer from {self.shown} is over 4 MiB")
            try:
                data = msgspec.json.decode(content)
            except msgspec.DecodeError:
                why = Undecodable(content).why()
                said = f"the answer from {self.shown} {why}"
                raise AgentFailure("bad_answer", said, raw=self.raw(content)) from None
            try:
                return dialect.read(data), data
            except AgentFailure as failure:
                if failure.reason != "bad_answer" or failure.raw:
                    raise
                raw = self.raw(content)
                raise AgentFailure(
                    "bad_answer", failure.detail, status=failure.status, message=failure.message, raw=raw
                ) from None
        first: float | None = None
        last: object = None
        try:
            if stream == "text":
                parts: list[str] = []
                async for chunk in Chunks(self.shown).read(response):
                    parts.append(chunk)
                    if chunk and first is None:
                        first = time.monotonic() - sent
                reply = AgentReply(answer=Answer(text="".join(parts)))
            else:
                fold = dialect.fold()
                session = self._agent.spec.session.id
                async for event in Events("sse" if stream == "sse" else "ndjson", self.shown).read(response):
                    if session and Found(session).value(event.data) is not None:
                        last = event.data
                    if fold.add(event) and first is None:
                        first = time.monotonic() - sent
                reply = fold.reply()
        except SSEError:
            raise AgentFailure(
                "bad_answer", f"the answer from {self.shown} is not an event stream ({kind or 'no type'})"
            ) from None
        except httpx.TimeoutException:
            raise AgentFailure("timeout", f"the stream from {self.shown} stopped (timed out)") from None
        except (httpx.HTTPError, ssl.SSLError, OSError) as error:
            raise AgentFailure(
                "stream_broken", f"the stream from {self.shown} broke ({type(error).__name__})"
            ) from None
        answer = msgspec.structs.replace(reply.answer, first=None if first is None else round(first, 4))
        return msgspec.structs.replace(reply, answer=answer), last

    def raw(self, content: bytes) -> str:
        """An unreadable answer as a `bad_answer` keeps it: its first 2,000 characters, masked."""
        return self._agent.masked().text(content.decode("utf-8", errors="replace"))[:MOST_RAW]

    async def received(
        self, request: tuple[str, str, Encoded | None], failed: str, kind: SpanKind
    ) -> Received:
        """A session request's whole answer; AgentFailure(`failed`) when it could not be made."""
        method, url, body = request
        spoken = {"Content-Type": body.content_type} if body is not None else {}
        headers = self.headers(spoken=spoken)
        content = body.content() if body is not None else None
        try:
            async with self.streamed(method, url, content, headers, failed, kind) as response:
                content = await Limited(MOST_BYTES).read(response)
                return Received(response.status_code, response.headers, content or b"")
        except AgentFailure as failure:
            if failure.reason.startswith("http_") or failure.reason in ("connection", "timeout"):
                raise AgentFailure(
                    failed,
                    failure.detail,
                    status=failure.status,
                    message=failure.message,
                    reached=failure.reached,
                ) from None
            raise

    @contextlib.asynccontextmanager
    async def streamed(
        self,
        method: str,
        url: str,
        body: bytes | None,
        headers: httpx.Headers,
        what: str = "",
        kind: SpanKind = "turn",
    ) -> AsyncIterator[httpx.Response]:
        """The agent's answer to one request, its status checked: Busy on a refusal (429, 503),
        AgentFailure on any other status that is not 2xx. With OAuth2 the token goes along, and a
        401 renews it once and sends the request again (a 401 was refused unprocessed). Each
        request sent carries the attempt's trace with a span id of its own, recorded as a Span of
        `kind` once it ends."""
        client = self._client
        if client is None:
            raise RuntimeError("the conversation is not open")
        tokens = self._agent.tokens
        shown = self._agent.shown_url(url)
        trace = TraceContext.current()
        renewed = False
        while True:
            if tokens is not None:
                headers["Authorization"] = f"Bearer {await tokens.token()}"
            span = trace.span_id() if self._agent.traced else ""
            if span:
                headers["traceparent"] = trace.traceparent(span)
            sent = time.monotonic()
            status = 0
            try:
                address = ADDRESSES.url(url)
                async with client.stream(method, address, content=body, headers=headers) as response:
                    status = response.status_code
                    if status == 401 and tokens is not None and not renewed:
                        await Limited(REFUSAL_BYTES).read(response)
                        refused = headers["Authorization"].removeprefix("Bearer ")
                        renewed = True
                        await tokens.renewed(refused)
                        continue
                    if not 200 <= status < 300:
                        await self.refused(response, url)
                    yield response
                    return
            except httpx.ConnectTimeout:
                raise AgentFailure(
                    "connection", f"no connection to {shown} (timed out)", reached=False
                ) from None
            except httpx.TimeoutException as error:
                raise AgentFailure("timeout", f"{shown} took too long ({type(error).__name__})") from None
            except httpx.ConnectError as error:
                why = ConnectProblem(error).text()
                raise AgentFailure("connection", f"no connection to {shown}{why}", reached=False) from None
            except (httpx.HTTPError, ssl.SSLError, OSError) as error:
                failed = type(error).__name__
                raise AgentFailure("connection", f"the request to {shown} failed ({failed})") from None
            finally:
                trace.record(span, kind, sent, status)

    async def refused(self, response: httpx.Response, url: str) -> None:
        """Busy or AgentFailure for an answer that is not 2xx, with the agent's own words."""
        status = response.status_code
        said = await Limited(REFUSAL_BYTES).read(response)
        try:
            message = ErrorBody(said or b"", self.masked).message()
        except RecursionError:
            message = ""  # an error body nested deeper than can be read says nothing
        shown = self._agent.shown_url(url)
        detail = f"HTTP {status} from {shown}" + (f" — {message}" if message else "")
        if status in (429, 503):
            raise Busy(Hints(response.headers).seconds(), detail, status=status, message=message)
        raise AgentFailure(f"http_{status}", detail, status=status, message=message)
