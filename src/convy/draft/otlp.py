"""OTLP JSON files, trace (`{"resourceSpans": …}`) or log (`{"resourceLogs": …}`), one export
request per file or one per line as the OpenTelemetry Collector's file exporter writes them, read a
line at a time into a Gathering; a line that is no such object is skipped with a warning naming
file:line."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import msgspec

from convy.draft.gathering import Gathering
from convy.draft.messages import EVENT_NAMES, Conventions, Typed


class JsonLines(msgspec.Struct, frozen=True):
    """A JSON file read as JSON Lines, a line at a time: (line number, the object), a bad line
    warned about in `warnings` and skipped. A file whose first line is no whole object is read as
    one object (a pretty-printed export)."""

    path: Path
    shown: str

    def objects(self, warnings: list[str]) -> Iterator[tuple[int, object]]:
        decoder = msgspec.json.Decoder()
        with self.path.open("rb") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    yield number, decoder.decode(line)
                except msgspec.DecodeError as error:
                    if number == 1:
                        whole = self.whole(decoder)
                        if whole is not None:
                            yield 1, whole
                            return
                    warnings.append(f"{self.shown}:{number}: skipped: not a JSON object ({error})")

    def whole(self, decoder: msgspec.json.Decoder[object]) -> object | None:
        try:
            return decoder.decode(self.path.read_bytes())
        except msgspec.DecodeError:
            return None


class OtlpFile(msgspec.Struct, frozen=True):
    """An OTLP JSON file of spans or log records (or both), as `shown` (its path as given)."""

    path: Path
    shown: str

    def read(self, into: Gathering, warnings: list[str]) -> None:
        typed = Typed()
        for number, read in JsonLines(self.path, self.shown).objects(warnings):
            for data in read if isinstance(read, list) else [read]:
                self.request(number, data, into, typed, warnings)

    def request(self, number: int, data: object, into: Gathering, typed: Typed, warnings: list[str]) -> None:
        """One export request (of spans, log records or both), read at `number`."""
        if not isinstance(data, Mapping) or not ("resourceSpans" in data or "resourceLogs" in data):
            warnings.append(f"{self.shown}:{number}: skipped: no resourceSpans or resourceLogs")
            return
        try:
            for scope in self.scopes(data, "resourceSpans", "scopeSpans"):
                for span in self.listed(scope.get("spans")):
                    self.span(span, into, typed)
            for scope in self.scopes(data, "resourceLogs", "scopeLogs"):
                for record in self.listed(scope.get("logRecords")):
                    self.record(record, into, typed)
        except (AttributeError, TypeError, ValueError) as error:
            warnings.append(f"{self.shown}:{number}: skipped the rest of it: {type(error).__name__}: {error}")

    def listed(self, items: object) -> list[Mapping[str, object]]:
        return [item for item in items if isinstance(item, Mapping)] if isinstance(items, list) else []

    def scopes(
        self, data: Mapping[str, object], resources: str, scopes: str
    ) -> Iterator[Mapping[str, object]]:
        for resource in data.get(resources, []) or []:  # type: ignore[attr-defined]
            yield from resource.get(scopes, []) or []

    def span(self, span: Mapping[str, object], into: Gathering, typed: Typed) -> None:
        events = [
            (str(event.get("name", "")), typed.pairs(event.get("attributes", [])))
            for event in span.get("events", []) or []  # type: ignore[attr-defined]
            if isinstance(event, Mapping)
        ]
        into.span(
            self.shown,
            str(span.get("traceId", "")),
            str(span.get("spanId", "")),
            str(span.get("parentSpanId", "") or ""),
            int(str(span.get("startTimeUnixNano", 0) or 0)),
            typed.pairs(span.get("attributes", [])),
            events,
        )

    def record(self, record: Mapping[str, object], into: Gathering, typed: Typed) -> None:
        attributes = typed.pairs(record.get("attributes", []))
        name = str(record.get("eventName") or attributes.get("event.name") or "")
        if name not in EVENT_NAMES:
            return
        body = typed.plain(record.get("body"))
        fields = {**(body if isinstance(body, Mapping) else {}), **attributes}
        if not isinstance(body, Mapping) and isinstance(body, str):
            fields.setdefault("content", body)
        at = int(str(record.get("timeUnixNano", 0) or 0)) or int(
            str(record.get("observedTimeUnixNano", 0) or 0)
        )
        asked, answered = Conventions().events([(name, fields)])
        into.call(
            self.shown,
            str(record.get("traceId", "") or ""),
            str(record.get("spanId", "") or ""),
            at,
            asked,
            answered,
            logged=True,
        )
