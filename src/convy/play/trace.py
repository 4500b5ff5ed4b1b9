"""Trace context (decision 33): the W3C trace of one attempt while it plays — one trace id for the
attempt, a new span id for each request sent to the agent, carried in its `traceparent` header — and
each such request recorded as a Span.

The attempt sets it for its conversation in a context variable (`TRACE`), which the agent's requests
read: the Agent interface stays as it is, for every agent, wrapper and fake (decision 33)."""

from __future__ import annotations

import contextlib
import contextvars
import random
import time
import uuid
from collections.abc import Iterator

import msgspec

from convy.play.outcome import Span, SpanKind

VERSION = "00"
"""The traceparent version this is written in."""
SAMPLED = "01"
"""The trace flags: sampled, so a tracing tool keeps the agent's side of the trace."""


class TraceContext:
    """The trace of one attempt: its `trace_id` (32 hex; "" for none) and the agent requests sent
    with it so far, in order, each a Span. Times are counted from `began` (time.monotonic)."""

    def __init__(self, trace_id: str = "", began: float = 0.0) -> None:
        self.trace_id = trace_id
        self.began = began
        self.spans: list[Span] = []

    @classmethod
    def new(cls) -> TraceContext:
        """A new trace, begun now, with a random trace id (never all zeros)."""
        return cls(NewId(16).hex(), time.monotonic())

    def traceparent(self, span_id: str) -> str:
        """The `traceparent` header of a request whose span id is `span_id`."""
        return f"{VERSION}-{self.trace_id}-{span_id}-{SAMPLED}"

    def span_id(self) -> str:
        """A new span id (16 hex) for a request; "" when there is no trace."""
        return NewId(8).hex() if self.trace_id else ""

    def record(self, span_id: str, kind: SpanKind, sent: float, status: int) -> None:
        """A request sent with `span_id` at `sent` (time.monotonic) ended now with HTTP `status`
        (0: no answer); nothing is recorded for a request sent without one."""
        if not span_id:
            return
        now = time.monotonic()
        self.spans.append(
            Span(
                span_id=span_id,
                kind=kind,
                at=round(sent - self.began, 4),
                seconds=round(now - sent, 4),
                status=status,
            )
        )

    def since(self, count: int) -> str:
        """The span id of the last turn request recorded after the first `count` spans (the one
        that got the turn's answer); "" when there is none."""
        return next((span.span_id for span in reversed(self.spans[count:]) if span.kind == "turn"), "")

    def recorded(self) -> tuple[str, tuple[Span, ...]]:
        """The trace id and the spans, as the attempt line keeps them: the trace id only when a
        request carried it."""
        return (self.trace_id, tuple(self.spans)) if self.spans else ("", ())

    @classmethod
    def current(cls) -> TraceContext:
        """The trace of the attempt being played in this task, or NO_TRACE."""
        return TRACE.get()

    @contextlib.contextmanager
    def carried(self) -> Iterator[None]:
        """While the block runs, this is the trace the agent's requests carry."""
        token = TRACE.set(self)
        try:
            yield
        finally:
            TRACE.reset(token)


class NewId(msgspec.Struct, frozen=True):
    """A random W3C id of `size` bytes as lowercase hex, never all zeros (which W3C forbids); drawn
    as OpenTelemetry's SDK draws them (`random.getrandbits`: an id must be unique, not secret, and
    one per request from the system's entropy cost a system call each)."""

    size: int

    def hex(self) -> str:
        while True:
            made = random.getrandbits(8 * self.size)
            if made:
                return f"{made:0{2 * self.size}x}"


class MessageIds:
    """The ids a conversation's messages and requests carry (A2A's message and request ids, AG-UI's
    message and run ids, Vercel AI's chat id): version 4 UUIDs drawn with `random` (unique, not
    secret: the system's entropy costs a system call each)."""

    def fresh(self) -> str:
        return str(uuid.UUID(int=random.getrandbits(128), version=4))


MESSAGE_IDS = MessageIds()


NO_TRACE = TraceContext()
"""No trace: requests carry no traceparent and nothing is recorded."""

TRACE: contextvars.ContextVar[TraceContext] = contextvars.ContextVar("convy_trace", default=NO_TRACE)
"""The trace of the attempt being played in this task; NO_TRACE outside an attempt (the agent
card, the version URL)."""
