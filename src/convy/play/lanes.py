"""Kept connections, lent out one holder at a time (decision 21).

The models' transport: each of its connections is a transport of its own holding one connection,
lent to one request at a time and kept for the next once the answer has been read, so choosing a
connection never scans a pool. The agent's clients: each with one connection, lent to one
conversation for all its turns and, during a run, handed to the next conversation once that one has
closed, so a new conversation does not pay a new TCP connection or TLS handshake when a kept
connection can serve it. A client or lane never serves two holders at once."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator, Callable

import httpx

ONE = httpx.Limits(max_connections=1, max_keepalive_connections=1, keepalive_expiry=None)
"""The limits of one kept connection: no other is ever opened beside it, and it is never let go
for having been idle (the server closing it is noticed before the next request)."""


class Lanes(httpx.AsyncBaseTransport):
    """A transport whose connections are lanes: each request takes an idle lane (or opens a new
    one), and gives it back when its answer is closed; at most `keep` idle lanes are kept, the
    others closed. `verify` is every lane's TLS check (made once: loading a CA bundle is slow).
    Closing the transport closes every idle lane and each lent one as it comes back."""

    def __init__(self, verify: ssl.SSLContext | bool, keep: int) -> None:
        self._verify = verify
        self._keep = keep
        self._idle: list[httpx.AsyncHTTPTransport] = []

    def lane(self) -> httpx.AsyncHTTPTransport:
        """An idle lane, the last one given back (its connection the most likely still open)."""
        if self._idle:
            return self._idle.pop()
        return httpx.AsyncHTTPTransport(verify=self._verify, limits=ONE, http1=True, http2=False)

    async def give(self, lane: httpx.AsyncHTTPTransport) -> None:
        if len(self._idle) < self._keep:
            self._idle.append(lane)
        else:
            await lane.aclose()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        lane = self.lane()
        try:
            response = await lane.handle_async_request(request)
        except BaseException:
            await self.give(lane)
            raise
        if not isinstance(response.stream, httpx.AsyncByteStream):
            raise TypeError("an async transport answered with a synchronous stream")
        # the lane's own response, its body wrapped (as httpx's client wraps it): no second copy
        response.stream = GivenBack(response.stream, self, lane)
        return response

    async def aclose(self) -> None:
        self._keep = 0
        idle, self._idle = self._idle, []
        for lane in idle:
            await lane.aclose()


class GivenBack(httpx.AsyncByteStream):
    """An answer's body whose closing gives its lane back."""

    def __init__(self, stream: httpx.AsyncByteStream, lanes: Lanes, lane: httpx.AsyncHTTPTransport) -> None:
        self._stream = stream
        self._lanes = lanes
        self._lane = lane

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._stream:
            yield part

    async def aclose(self) -> None:
        try:
            await self._stream.aclose()
        finally:
            await self._lanes.give(self._lane)


class Handover:
    """The clients of one participant's conversations, each with one kept connection: a
    conversation takes one (`client`) when it opens and gives it back (`give`) when it closes.
    Inside `kept()` — one run — a client given back is handed to the next conversation with its
    connection (never while another conversation has it); outside, or after, it is closed, so each
    conversation has a connection of its own that ends with it."""

    def __init__(self) -> None:
        self._idle: list[httpx.AsyncClient] = []
        self._keeping = False

    def client(self, make: Callable[[], httpx.AsyncClient]) -> httpx.AsyncClient:
        """A client handed over by a conversation that has closed, else a new one from `make`."""
        if self._idle:
            return self._idle.pop()
        return make()

    async def give(self, client: httpx.AsyncClient) -> None:
        if self._keeping:
            self._idle.append(client)
        else:
            await client.aclose()

    @contextlib.asynccontextmanager
    async def kept(self) -> AsyncIterator[None]:
        """Hand clients from conversation to conversation while the block runs; close them after."""
        self._keeping = True
        try:
            yield
        finally:
            self._keeping = False
            idle, self._idle = self._idle, []
            for client in idle:
                with contextlib.suppress(ssl.SSLError, OSError, httpx.HTTPError):
                    await client.aclose()
