"""Recorded conversations written as tests need them: OTLP JSON spans and log records (as the
Collector's file exporter writes them, one export request a line), and `convy` run in a process."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.support import command


def convy(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`convy` in a process, with the time a draft of real instrumentation's files may take."""
    return command.convy(*args, cwd=cwd, env=env, timeout=300)


def value(plain: Any) -> dict[str, Any]:
    """A plain value as OTLP JSON types it."""
    if isinstance(plain, bool):
        return {"boolValue": plain}
    if isinstance(plain, int):
        return {"intValue": str(plain)}
    if isinstance(plain, list):
        return {"arrayValue": {"values": [value(item) for item in plain]}}
    if isinstance(plain, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": value(v)} for k, v in plain.items()]}}
    return {"stringValue": str(plain)}


def span(
    trace: str,
    span_id: str,
    at: int,
    attributes: dict[str, Any],
    parent: str = "",
    events: Iterable[Any] = (),
) -> dict[str, Any]:
    made: dict[str, Any] = {
        "traceId": trace,
        "spanId": span_id,
        "name": "chat",
        "startTimeUnixNano": str(at),
        "endTimeUnixNano": str(at + 1000),
        "attributes": [{"key": k, "value": value(v)} for k, v in attributes.items()],
        "events": list(events),
    }
    if parent:
        made["parentSpanId"] = parent
    return made


def spans_line(*spans: dict[str, Any]) -> str:
    return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": list(spans)}]}]})


def record(trace: str, span_id: str, name: str, body: Any, observed: int) -> dict[str, Any]:
    return {
        "traceId": trace,
        "spanId": span_id,
        "observedTimeUnixNano": str(observed),
        "eventName": name,
        "body": value(body),
        "attributes": [],
    }


def logs_line(*records: dict[str, Any]) -> str:
    return json.dumps({"resourceLogs": [{"resource": {}, "scopeLogs": [{"logRecords": list(records)}]}]})


def genai(messages: list[tuple[str, str]]) -> str:
    """`gen_ai.input.messages` (or output) as the GenAI conventions write it: a JSON string of parts."""
    return json.dumps(
        [{"role": role, "parts": [{"type": "text", "content": text}]} for role, text in messages]
    )


def openinference(messages: list[tuple[str, str]], prefix: str) -> dict[str, str]:
    found = {}
    for index, (role, text) in enumerate(messages):
        found[f"{prefix}.{index}.message.role"] = role
        found[f"{prefix}.{index}.message.content"] = text
    return found
