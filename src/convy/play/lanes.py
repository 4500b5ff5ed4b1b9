"""The agent's clients, lent out one conversation at a time (decision 21): each with one connection,
kept for all its turns and, during a run, handed to the next conversation once that one has closed,
so a new conversation pays no new TCP connection or TLS handshake when a kept one can serve it.

A client never serves two holders at once. (The models' kept connections are their transport's:
convy.play.kept, decision 59.)"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator, Callable

import httpx


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
