"""A streamed answer read as it arrives: the events of a response — server-sent events (parsed by
httpx-sse, never by hand) or NDJSON (one JSON object per line) — up to `data: [DONE]` or the end of
the body, or a plain text body in chunks. A stream longer than MOST_BYTES is
AgentFailure("answer_too_large")."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Literal

import httpx
import msgspec
from httpx_sse import EventSource

from convy.play.agent import AgentFailure
from convy.play.template import Path, PathMissing
from convy.play.wire.reading import MOST_BYTES

DONE = "[DONE]"


class Event(msgspec.Struct, frozen=True):
    """One streamed event: its SSE `name` ("message" unless the server named it; "" in NDJSON) and
    its `data` decoded as JSON (the text itself when it is not JSON)."""

    name: str
    data: object

    def named(self, wanted: str) -> bool:
        """Whether the event is of the kind `wanted` ("" is any): its SSE name, or its data's `type`."""
        if not wanted:
            return True
        if self.name == wanted:
            return True
        return isinstance(self.data, dict) and self.data.get("type") == wanted

    def has(self, where: Mapping[str, object]) -> bool:
        """Whether the event's data has each value of `where` at its path (`0.type`: AIMessageChunk),
        equal in kind too (true is not 1)."""
        for path, wanted in where.items():
            try:
                found = Path(path).found(self.data)
            except PathMissing:
                return False
            if found != wanted or type(found) is not type(wanted):
                return False
        return True


class Decoded(msgspec.Struct, frozen=True):
    """An event's data text decoded as JSON where it is JSON."""

    text: str

    def value(self) -> object:
        try:
            return msgspec.json.decode(self.text)
        except msgspec.DecodeError:
            return self.text


class Events(msgspec.Struct, frozen=True):
    """The events of a streamed answer, in order: `sse` or `ndjson`."""

    kind: Literal["sse", "ndjson"]
    shown: str

    async def read(self, response: httpx.Response) -> AsyncIterator[Event]:
        size = 0
        async for name, text in self.raw(response):
            size += len(text)
            if size > MOST_BYTES:
                raise AgentFailure("answer_too_large", f"the answer streamed from {self.shown} is over 4 MiB")
            if text.strip() == DONE:
                return
            yield Event(name, Decoded(text).value())

    async def raw(self, response: httpx.Response) -> AsyncIterator[tuple[str, str]]:
        if self.kind == "sse":
            async for sse in EventSource(response).aiter_sse():
                yield sse.event, sse.data
        else:
            async for line in response.aiter_lines():
                if line.strip():
                    yield "", line


class Chunks(msgspec.Struct, frozen=True):
    """A plain text answer (`stream: text`) as it arrives."""

    shown: str

    async def read(self, response: httpx.Response) -> AsyncIterator[str]:
        size = 0
        async for text in response.aiter_text():
            size += len(text)
            if size > MOST_BYTES:
                raise AgentFailure("answer_too_large", f"the answer streamed from {self.shown} is over 4 MiB")
            yield text
