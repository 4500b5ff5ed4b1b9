"""A run's traces (traces.py) sent to an OpenTelemetry collector over OTLP/HTTP (`POST
<url>/v1/traces`, protobuf) by the official SDK's exporter: the spans handed to it as the SDK's
ReadableSpans with their recorded ids, so nothing here writes protobuf (decision 34).

The OpenTelemetry packages are the `otel` extra, imported only when a run is sent. The receiver's
URL and its headers (`Name: value` lines, for a receiver that needs a key) are checked before any
request."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx
import msgspec

from convy.errors import ConfigurationError, ConvyError
from convy.play.errorbody import ErrorBody, Masked
from convy.play.wire.spec import HeaderName
from convy.release import VERSION
from convy.store.spans import TraceSpan
from convy.store.traces import AttemptTrace

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

INSTALL = "pip install convy-action[otel]"
ERRNO = re.compile(r"\[Errno -?\d+\] [^'\")]+")
"""The operating system's words in a connection error (`[Errno 111] Connection refused`)."""
PATH = "/v1/traces"


class ReceiverRefused(ConvyError):
    """The receiver did not take the spans (its answer's status and message, or why it could not be
    reached); every span sent before stays sent."""


class ReceiverUrl(msgspec.Struct, frozen=True):
    """A receiver's URL as given: its base (`http://localhost:4318`), or its traces URL itself."""

    url: str

    def problem(self) -> str:
        """Why the URL cannot be sent to ("" when it can); the URL not shown (it may hold a key)."""
        try:
            parsed = httpx.URL(self.url.strip())
        except httpx.InvalidURL:
            return "is not a URL"
        if parsed.scheme not in ("http", "https") or not parsed.host:
            return "must be an http:// or https:// URL, such as http://localhost:4318"
        return ""

    def traces(self) -> str:
        """Where the spans are posted: the URL with `/v1/traces`, unless it ends so already."""
        url = httpx.URL(self.url.strip())
        path = url.path.rstrip("/")
        return str(url.copy_with(path=path if path.endswith(PATH) else path + PATH))

    def shown(self) -> str:
        """The traces URL without its query or user info, which may hold keys."""
        try:
            return str(httpx.URL(self.traces()).copy_with(query=None, fragment=None, userinfo=b""))
        except httpx.InvalidURL:
            return "the OTLP endpoint"


class Headers(msgspec.Struct, frozen=True):
    """Request headers given as `Name: value` lines (a Phoenix or Langfuse key); `where` names the
    setting or flag in errors, which never show a value."""

    lines: tuple[str, ...]
    where: str

    def parsed(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for number, line in enumerate((one for text in self.lines for one in text.splitlines()), start=1):
            if not line.strip():
                continue
            name, colon, value = line.partition(":")
            if not colon or not name.strip():
                raise ConfigurationError(self.where, f"line {number} is not `Name: value`")
            if not HeaderName(name.strip()).valid():
                raise ConfigurationError(self.where, f"line {number}: {HeaderName(name).problem()}")
            found[name.strip()] = value.strip()
        return found


class Sent(msgspec.Struct, frozen=True):
    """What a receiver took: how many traces (attempts) and spans."""

    traces: int
    spans: int


class Collector(msgspec.Struct, frozen=True, kw_only=True):
    """An OTLP/HTTP receiver: its endpoint, the headers it needs, how long one request may take and
    how many spans go in one request."""

    endpoint: ReceiverUrl
    headers: Mapping[str, str] = msgspec.field(default_factory=dict)
    timeout: float = 10.0
    batch: int = 512
    setting: str = "--otlp"
    """The flag or setting that named the endpoint, for a missing package's error."""

    @classmethod
    def given(cls, url: str, headers: Sequence[str], names: tuple[str, str]) -> Collector:
        """The receiver at `url` with `headers` (`Name: value` lines) as given by the flags or settings
        `names` (the URL's, the headers'); ConfigurationError naming the one that is bad."""
        endpoint = ReceiverUrl(url)
        if problem := endpoint.problem():
            raise ConfigurationError(names[0], problem)
        return cls(endpoint=endpoint, headers=Headers(tuple(headers), names[1]).parsed(), setting=names[0])

    def send(self, attempts: Iterable[AttemptTrace]) -> Sent:
        """Every attempt's spans posted, `batch` at a time; ReceiverRefused when the receiver does not take
        them; ConfigurationError when the OpenTelemetry packages are not installed."""
        sdk = Sdk.loaded(self.setting)
        watched = sdk.session()
        exporter = sdk.exporter(self.endpoint.traces(), self.headers, self.timeout, watched)
        traces = spans = 0
        pending: list[TraceSpan] = []
        try:
            with Quiet.kept():
                for attempt in attempts:
                    pending.extend(attempt.spans())
                    traces += 1
                    if len(pending) >= self.batch:
                        spans += self.posted(sdk, exporter, watched, pending)
                        pending = []
                if pending:
                    spans += self.posted(sdk, exporter, watched, pending)
        finally:
            exporter.shutdown()
        return Sent(traces=traces, spans=spans)

    def posted(self, sdk: Sdk, exporter: Any, watched: Any, spans: Sequence[TraceSpan]) -> int:
        from opentelemetry.sdk.trace.export import SpanExportResult

        watched.answers.clear()
        watched.errors.clear()
        if exporter.export([sdk.readable(span) for span in spans]) is SpanExportResult.SUCCESS:
            return len(spans)
        raise ReceiverRefused(self.why(watched))

    def why(self, watched: Any) -> str:
        """The receiver's own words: its last answer's status and message, else why it was not reached."""
        masked = Masked(tuple(self.headers.values()))
        if watched.answers:
            answer = watched.answers[-1]
            message = ErrorBody(answer.content, masked).message()
            return f"{self.endpoint.shown()} answered {answer.status_code}" + (
                f": {message}" if message else ""
            )
        if watched.errors:
            text = " ".join(masked.text(str(watched.errors[-1])).split())
            cause = ERRNO.search(text)
            return f"{self.endpoint.shown()} could not be reached: {cause[0] if cause else text[:300]}"
        return f"{self.endpoint.shown()} did not take the spans"


class Sdk(msgspec.Struct, frozen=True):
    """The OpenTelemetry SDK and its OTLP/HTTP exporter, imported when a run is sent."""

    resource: Any

    @classmethod
    def loaded(cls, setting: str) -> Sdk:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: F401
            from opentelemetry.sdk.resources import Resource
        except ImportError:
            raise ConfigurationError(
                setting, f"sending to OpenTelemetry needs its packages: {INSTALL}"
            ) from None

        return cls(Resource.create({"service.name": "convy", "service.version": VERSION}))

    def session(self) -> Any:
        """A requests session that keeps the receiver's answers and the errors of reaching it."""
        import requests

        class Watched(requests.Session):
            def __init__(self) -> None:
                super().__init__()
                self.answers: list[requests.Response] = []
                self.errors: list[Exception] = []

            def request(self, *args: Any, **kwargs: Any) -> requests.Response:
                try:
                    answer = super().request(*args, **kwargs)
                except Exception as error:
                    self.errors.append(error)
                    raise
                if answer.status_code >= 300:
                    self.answers.append(answer)
                return answer

        return Watched()

    def exporter(self, url: str, headers: Mapping[str, str], timeout: float, session: Any) -> Any:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter(endpoint=url, headers=dict(headers), timeout=timeout, session=session)

    def readable(self, span: TraceSpan) -> ReadableSpan:
        """One of our spans as the SDK's record of a finished span, with its own ids."""
        from opentelemetry import trace
        from opentelemetry.sdk.trace import Event, ReadableSpan
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope
        from opentelemetry.trace import Status, StatusCode

        sampled = trace.TraceFlags(trace.TraceFlags.SAMPLED)
        trace_id = int(span.trace_id, 16)
        context = trace.SpanContext(trace_id, int(span.span_id, 16), is_remote=False, trace_flags=sampled)
        parent = (
            trace.SpanContext(trace_id, int(span.parent_id, 16), is_remote=False, trace_flags=sampled)
            if span.parent_id
            else None
        )

        return ReadableSpan(
            name=span.name,
            context=context,
            parent=parent,
            resource=self.resource,
            attributes=span.attributes,
            events=[Event(e.name, e.attributes, timestamp=e.at) for e in span.events],
            kind=trace.SpanKind.CLIENT if span.kind == "client" else trace.SpanKind.INTERNAL,
            status=Status(StatusCode.ERROR, span.error) if span.error else Status(StatusCode.OK),
            start_time=span.start,
            end_time=span.end,
            instrumentation_scope=InstrumentationScope("convy", VERSION),
        )


class Quiet(logging.Handler):
    """The exporter's log lines kept from the terminal while spans are sent (the library never
    prints): ReceiverRefused tells the command what went wrong."""

    def emit(self, record: logging.LogRecord) -> None:
        return

    @classmethod
    @contextlib.contextmanager
    def kept(cls) -> Iterator[None]:
        logger = logging.getLogger("opentelemetry")
        handler = cls()
        logger.addHandler(handler)
        try:
            yield
        finally:
            logger.removeHandler(handler)
