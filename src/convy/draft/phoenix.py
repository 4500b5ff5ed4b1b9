"""Arize Phoenix read over its HTTP API: a project's spans, a page at a time
(`GET /v1/projects/<project>/spans`), with `PHOENIX_API_KEY` as a bearer token when it is set."""

from __future__ import annotations

import datetime
from collections.abc import Mapping

import httpx
import msgspec

from convy.draft.gathering import Gathering
from convy.draft.messages import Flattened
from convy.errors import ConfigurationError

PAGE = 1000
"""Spans asked for a page."""


class PhoenixProject(msgspec.Struct, frozen=True):
    """A Phoenix project's spans at `url` (Phoenix's base address), `key` its API key ("" none)."""

    url: str
    project: str
    key: str = ""

    def read(self, into: Gathering, warnings: list[str]) -> None:
        base = self.url.rstrip("/")
        origin = f"{base}/projects/{self.project}"
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        cursor = ""
        with httpx.Client(timeout=60, headers=headers) as client:
            while True:
                params = {"limit": str(PAGE), **({"cursor": cursor} if cursor else {})}
                address = f"{base}/v1/projects/{self.project}/spans"
                try:
                    answer = client.get(address, params=params)
                except httpx.HTTPError as error:
                    raise ConfigurationError("--phoenix", f"{base} cannot be reached: {error}") from None
                if answer.status_code in (401, 403):
                    raise ConfigurationError(
                        "--phoenix", f"{base} refused the request ({answer.status_code}): set PHOENIX_API_KEY"
                    )
                if answer.status_code == 404:
                    raise ConfigurationError(
                        "--project", f"Phoenix at {base} has no project {self.project!r}"
                    )
                if answer.status_code != 200:
                    raise ConfigurationError("--phoenix", f"{address} answered {answer.status_code}")
                try:
                    page = answer.json()
                except ValueError:
                    raise ConfigurationError("--phoenix", f"{address} answered no JSON") from None
                spans = page.get("data", []) if isinstance(page, Mapping) else []
                for number, span in enumerate(spans):
                    if not isinstance(span, Mapping):
                        warnings.append(f"{origin}: span {number} of a page skipped: not an object")
                        continue
                    self.span(origin, span, into)
                cursor = str(page.get("next_cursor") or "") if isinstance(page, Mapping) else ""
                if not cursor:
                    return

    def span(self, origin: str, span: Mapping[str, object], into: Gathering) -> None:
        context = span.get("context") if isinstance(span.get("context"), Mapping) else {}
        assert isinstance(context, Mapping)
        attributes = span.get("attributes")
        flat = Flattened().of(attributes if isinstance(attributes, Mapping) else {})
        events = [
            (
                str(event.get("name", "")),
                Flattened().of(event["attributes"]) if isinstance(event.get("attributes"), Mapping) else {},
            )
            for event in span.get("events", []) or []  # type: ignore[attr-defined]
            if isinstance(event, Mapping)
        ]
        into.span(
            origin,
            str(context.get("trace_id", "")),
            str(context.get("span_id", "")),
            str(span.get("parent_id") or ""),
            self.nanoseconds(span.get("start_time")),
            flat,
            events,
        )

    def nanoseconds(self, stamp: object) -> int:
        if not isinstance(stamp, str):
            return 0
        try:
            moment = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        except ValueError:
            return 0
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=datetime.UTC)
        return int(moment.timestamp() * 1_000_000) * 1000
