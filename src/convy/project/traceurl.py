"""The `trace-url` setting (decision 33): a URL template with `{trace_id}` and/or `{conversation}`
that links an attempt to the team's own tracing tool, checked before anything runs, and filled in
for one attempt."""

from __future__ import annotations

import re
from urllib.parse import quote

import httpx
import msgspec

from convy.errors import ConfigurationError

PLACEHOLDERS = ("trace_id", "conversation")
"""What a template may name between braces."""
BRACED = re.compile(r"\{([^{}]*)\}")
UNSAFE = re.compile(r"[\s<>\"]")
"""What a link may not hold: blanks, angle brackets and quotes (it goes in a Markdown `<...>` link
and an HTML attribute)."""


class TraceUrl(msgspec.Struct, frozen=True):
    """A trace-url template; "" is none (no trace links)."""

    template: str = ""

    def checked(self) -> TraceUrl:
        """The template, or ConfigurationError naming `trace-url`: it must be an http(s) URL that
        names `{trace_id}` or `{conversation}` and no other placeholder."""
        template = self.template.strip()
        if not template:
            return TraceUrl()
        named = BRACED.findall(template)
        unknown = sorted({name for name in named if name not in PLACEHOLDERS})
        if unknown:
            shown = ", ".join(f"{{{name}}}" for name in unknown)
            raise ConfigurationError(
                "trace-url", f"has an unknown placeholder {shown}: use {{trace_id}} or {{conversation}}"
            )
        if not named:
            raise ConfigurationError("trace-url", "names neither {trace_id} nor {conversation}")
        if "{" in BRACED.sub("", template) or "}" in BRACED.sub("", template):
            raise ConfigurationError("trace-url", "has a brace that opens or closes no placeholder")
        sample = TraceUrl(template).filled("0" * 32, "run-scenario-0")
        if UNSAFE.search(sample) or len(sample) > 2000:
            raise ConfigurationError("trace-url", "must be a URL without blanks, quotes or angle brackets")
        try:
            url = httpx.URL(sample)
        except httpx.InvalidURL:
            raise ConfigurationError("trace-url", "is not a valid URL") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ConfigurationError("trace-url", "must be an http:// or https:// address")
        return TraceUrl(template)

    def filled(self, trace_id: str, conversation: str) -> str:
        """The link of one attempt, each value URL-encoded; "" when there is no template, or it names
        a value the attempt does not have (no trace id: trace context was off)."""
        if not self.template:
            return ""
        named = set(BRACED.findall(self.template))
        if ("trace_id" in named and not trace_id) or ("conversation" in named and not conversation):
            return ""
        values = {"trace_id": quote(trace_id, safe=""), "conversation": quote(conversation, safe="")}
        return BRACED.sub(lambda found: values.get(found.group(1), found.group(0)), self.template)
