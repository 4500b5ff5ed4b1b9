"""An OTLP/HTTP receiver of our own: `POST /v1/traces` bodies decoded with the official protobuf
classes (opentelemetry-proto, which the exporter brings) into plain spans the tests can read; it can
be told to refuse with a status and a message, or to want a header."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from convy.demo.localserver import LocalServer

Answer = tuple[int, dict[str, str], bytes]


def value(any_value: AnyValue) -> object:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def attributes(pairs: list[KeyValue]) -> dict[str, object]:
    return {pair.key: value(pair.value) for pair in pairs}


@dataclass
class ReceivedEvent:
    name: str
    at: int
    attributes: dict[str, object]


@dataclass
class ReceivedSpan:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    kind: int
    start: int
    end: int
    attributes: dict[str, object]
    events: list[ReceivedEvent]
    status: int
    message: str
    resource: dict[str, object]


@dataclass
class OtlpReceiver:
    """Receives spans at `url` + /v1/traces while started; `refuse` answers with that status and
    message; `wanted` is a header (name, value) every request must carry (else 401)."""

    refuse: tuple[int, str] = (0, "")
    wanted: tuple[str, str] = ("", "")
    spans: list[ReceivedSpan] = field(default_factory=list)
    requests: list[dict[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server = LocalServer(self.route)
        self.url = ""
        """Its base address, once started (kept after it stops)."""

    def __enter__(self) -> OtlpReceiver:
        self._server.start()
        self.url = self._server.url
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    def route(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Answer:
        with self._lock:
            self.requests.append(headers)
        if method != "POST" or path != "/v1/traces":
            return 404, {"Content-Type": "text/plain"}, b"not found"
        name, wanted = self.wanted
        if name and headers.get(name.lower()) != wanted:
            return 401, {"Content-Type": "application/json"}, json.dumps({"message": "no valid key"}).encode()
        status, message = self.refuse
        if status:
            return status, {"Content-Type": "application/json"}, json.dumps({"message": message}).encode()
        if headers.get("content-type") != "application/x-protobuf":
            return 415, {"Content-Type": "text/plain"}, b"protobuf only"
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        received: list[ReceivedSpan] = []
        for resource_spans in request.resource_spans:
            resource = attributes(list(resource_spans.resource.attributes))
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    received.append(
                        ReceivedSpan(
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_id=span.parent_span_id.hex(),
                            name=span.name,
                            kind=span.kind,
                            start=span.start_time_unix_nano,
                            end=span.end_time_unix_nano,
                            attributes=attributes(list(span.attributes)),
                            events=[
                                ReceivedEvent(e.name, e.time_unix_nano, attributes(list(e.attributes)))
                                for e in span.events
                            ],
                            status=span.status.code,
                            message=span.status.message,
                            resource=resource,
                        )
                    )
        with self._lock:
            self.spans.extend(received)
        return 200, {"Content-Type": "application/x-protobuf"}, b""
