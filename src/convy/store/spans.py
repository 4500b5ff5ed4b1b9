"""Spans: what one span of an OpenTelemetry trace is, as convy lays out a run's attempts — its ids
(the recorded ones, else ones made from the run, so the same attempt sent twice keeps them), its times
in nanoseconds, its attributes with the GenAI token counts and its error — without OpenTelemetry;
traces.py lays an attempt out in them, otlp.py sends them."""

from __future__ import annotations

import calendar
import hashlib
import re
import time

import msgspec

from convy.play.agent import Usage
from convy.play.outcome import STAMP, Turn
from convy.play.outcome import Span as Request

Value = str | bool | int | float
"""An attribute's value, as OTLP carries it."""

TRACE_ID = re.compile(r"[0-9a-f]{32}")
SPAN_ID = re.compile(r"[0-9a-f]{16}")
NANOS = 1_000_000_000


class SpanEvent(msgspec.Struct, frozen=True, kw_only=True):
    """Something that happened at one moment of a span: a claim's decision."""

    name: str
    at: int
    """Nanoseconds since the epoch."""
    attributes: dict[str, Value]


class TraceSpan(msgspec.Struct, frozen=True, kw_only=True):
    """One span of an attempt's trace: ids as lowercase hex, times in nanoseconds since the epoch."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str = ""
    """"" for the attempt's root."""
    kind: str = "internal"
    """`internal` or `client` (a request convy sent)."""
    start: int
    end: int
    attributes: dict[str, Value]
    events: tuple[SpanEvent, ...] = ()
    error: str = ""
    """Why the span is an error ("" when it went well)."""


class Ids(msgspec.Struct, frozen=True, kw_only=True):
    """The ids of one attempt's spans: the recorded ones where there are any, else made from the
    run's key, the scenario and the index (sha256), so the same attempt sent twice keeps its ids.
    The one place an agent request's span id is looked up."""

    run: str
    scenario: str
    index: int
    trace_id: str = ""

    def made(self, part: str, length: int) -> str:
        key = f"{self.run}\n{self.scenario}\n{self.index}\n{part}".encode()
        return hashlib.sha256(key).hexdigest()[:length]

    def trace(self) -> str:
        given = self.trace_id
        return given if TRACE_ID.fullmatch(given) and set(given) != {"0"} else self.made("trace", 32)

    def span(self, part: str) -> str:
        return self.made(part, 16)

    def request(self, turn: Turn, number: int) -> str:
        """The span id of the agent request that got turn `number`'s answer."""
        given = turn.span_id
        return given if SPAN_ID.fullmatch(given) and set(given) != {"0"} else self.span(f"turn {number}")

    def sent(self, request: Request, position: int) -> str:
        """The span id of the attempt's agent request at `position` (from 0) of its line's `spans`."""
        given = request.span_id
        return given if SPAN_ID.fullmatch(given) and set(given) != {"0"} else self.span(f"request {position}")


class GenAiTokens(msgspec.Struct, frozen=True):
    """A Usage as GenAI attributes: a count nobody reported is left out, never 0."""

    usage: Usage | None

    def attributes(self) -> dict[str, Value]:
        found: dict[str, Value] = {}
        if self.usage is not None and self.usage.input is not None:
            found["gen_ai.usage.input_tokens"] = self.usage.input
        if self.usage is not None and self.usage.output is not None:
            found["gen_ai.usage.output_tokens"] = self.usage.output
        return found


class Status(msgspec.Struct, frozen=True):
    """An agent request's HTTP status as a span's error: `HTTP 401` from 400 on, `no answer` for 0
    (none came), "" for any other."""

    code: int

    def error(self) -> str:
        if self.code == 0:
            return "no answer"
        return f"HTTP {self.code}" if self.code >= 400 else ""


class Moment(msgspec.Struct, frozen=True):
    """A moment written as STAMP (UTC), in nanoseconds since the epoch; the first of `texts` that
    reads (an attempt's start, else its run's), else the epoch."""

    texts: tuple[str, ...]

    def nanos(self) -> int:
        for text in self.texts:
            try:
                return calendar.timegm(time.strptime(text, STAMP)) * NANOS
            except ValueError:
                continue
        return 0
