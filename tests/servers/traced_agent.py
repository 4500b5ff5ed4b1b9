"""TracedAgent: a real ASGI agent (Starlette, served by uvicorn in a thread of its own) instrumented
with OpenTelemetry as a team's agent is: each request's trace context is taken from its headers by
the W3C propagator (`opentelemetry.propagate.extract`), and the agent's own work runs in a span of
the official SDK's tracer under it — the spans kept by an InMemorySpanExporter.

`POST /chat` (`{"message"}`) → `{"reply": "echo: <message>"}`; the work span is named `agent.turn`
and has a child `agent.tool` (a tool call the agent makes)."""

from __future__ import annotations

from typing import Self

from opentelemetry import trace
from opentelemetry.propagate import extract
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.servers.asgi import Served


class TracedAgent:
    """A running agent whose spans `spans()` gives; `url` is its base address. Use with `with`."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = provider.get_tracer("traced-agent")
        self._served = Served(Starlette(routes=[Route("/chat", self.chat, methods=["POST"])]))

    @property
    def url(self) -> str:
        return self._served.url

    def __enter__(self) -> Self:
        self._served.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._served.stop()

    def spans(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.exporter.get_finished_spans() if span.name == name]

    async def chat(self, request: Request) -> JSONResponse:
        context = extract(dict(request.headers))
        body = await request.json()
        with self.tracer.start_as_current_span("agent.turn", context=context, kind=trace.SpanKind.SERVER):
            with self.tracer.start_as_current_span("agent.tool"):
                pass
            return JSONResponse({"reply": f"echo: {body['message']}"})
