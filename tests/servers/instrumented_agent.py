"""A chat agent instrumented as a team instruments theirs: the official `openai` client, with
OpenInference's or OpenTelemetry's (`opentelemetry-instrumentation-openai-v2`) instrumentation,
asks a model at MODEL_URL; its spans and log records are exported as the OpenTelemetry Collector's
file exporter writes them: one OTLP JSON export request per line (children end, and are written,
before their parents).

    python -m tests.servers.instrumented_agent FLAVOR MODEL_URL SPANS LOGS

FLAVOR is `openinference`, `openinference-genai` (OpenInference with its GenAI attributes too),
`openai-v2-older` (its 2.3b0 release, in a Python of its own: messages only in log events) or
`openai-v2`. It serves `POST /chat` with `{"messages": [...], "session": "..."}` (the dialogue so
far; each turn is a trace of its own, its `invoke_agent` span carrying the session as
`gen_ai.conversation.id` for `openai-v2`; OpenInference's calls have no parent: their
conversation is found by the history each call carries) and answers `{"reply": {"text": ...}}`;
it prints its URL on the first line of stdout and serves until stdin closes. With PHOENIX_OTLP
set, its spans are also sent there over OTLP/HTTP (to Arize Phoenix). Its instrumentation is
global to the process, hence a process of its own."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SYSTEM = "You are the support agent of a shop. Answer briefly."


class JsonLines:
    """One file, each export request written as one line of OTLP JSON with hex ids."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()

    def write(self, request: Any) -> None:
        from google.protobuf.json_format import MessageToDict

        data = MessageToDict(request)
        line = json.dumps(self.hexed(data), separators=(",", ":"))
        with self._lock, self._path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")

    def hexed(self, data: Any) -> Any:
        """The ids as OTLP JSON writes them: hex, not protobuf JSON's base64."""
        if isinstance(data, dict):
            return {
                key: base64.b64decode(value).hex()
                if key in {"traceId", "spanId", "parentSpanId"} and isinstance(value, str)
                else self.hexed(value)
                for key, value in data.items()
            }
        if isinstance(data, list):
            return [self.hexed(item) for item in data]
        return data


def exporters(spans: Path, logs: Path) -> tuple[Any, Any]:
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk._logs.export import LogExporter, LogExportResult
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    span_file, log_file = JsonLines(spans), JsonLines(logs)

    class SpanFile(SpanExporter):
        def export(self, batch: Sequence[Any]) -> SpanExportResult:
            span_file.write(encode_spans(batch))
            return SpanExportResult.SUCCESS

    class LogFile(LogExporter):
        def export(self, batch: Sequence[Any]) -> LogExportResult:
            log_file.write(encode_logs(batch))
            return LogExportResult.SUCCESS

        def shutdown(self) -> None:
            return None

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    return SpanFile(), LogFile()


def instrumented(flavor: str, spans: Path, logs: Path) -> Any:
    """The tracer of the application, its providers set up and the client instrumented."""
    from opentelemetry import _logs, trace
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    span_exporter, log_exporter = exporters(spans, logs)
    resource = Resource.create({"service.name": "shop-agent"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    if os.environ.get("PHOENIX_OTLP"):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        sent = OTLPSpanExporter(endpoint=os.environ["PHOENIX_OTLP"] + "/v1/traces")
        tracer_provider.add_span_processor(SimpleSpanProcessor(sent))
    trace.set_tracer_provider(tracer_provider)
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
    _logs.set_logger_provider(logger_provider)
    if flavor.startswith("openinference"):
        from openinference.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
    else:
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as V2

        V2().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    return trace.get_tracer("shop-agent")


def main(flavor: str, model_url: str, spans: str, logs: str) -> None:
    if flavor == "openinference-genai":
        os.environ["OPENINFERENCE_ENABLE_GENAI_SEMCONV"] = "true"
    if flavor.startswith("openai-v2"):
        os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_and_event")
        os.environ.setdefault("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    tracer = instrumented(flavor, Path(spans), Path(logs))
    import openai

    from convy.demo.localserver import LocalServer

    client = openai.OpenAI(base_url=model_url, api_key="local")

    def route(
        method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if method != "POST" or path != "/chat":
            return 404, {"Content-Type": "text/plain"}, b"not found"
        asked = json.loads(body)
        messages = [{"role": "system", "content": SYSTEM}, *asked["messages"]]
        parent = (
            tracer.start_as_current_span(
                "invoke_agent shop", attributes={"gen_ai.conversation.id": asked.get("session", "")}
            )
            if flavor.startswith("openai-v2")
            else contextlib.nullcontext()
        )
        with parent:
            completion = client.chat.completions.create(model="shop-model", messages=messages)
        text = completion.choices[0].message.content or ""
        return 200, {"Content-Type": "application/json"}, json.dumps({"reply": {"text": text}}).encode()

    with LocalServer(route) as server:
        print(server.url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main(*sys.argv[1:5])
