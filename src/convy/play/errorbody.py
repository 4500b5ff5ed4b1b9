"""What a service said when it answered with an error: the body of an error answer read for its
message (OpenAI, Azure, Anthropic, LiteLLM, vLLM, FastAPI and plain-text shapes) with the secrets
that must never be shown masked, and what an error answer means for a model's request (CONTEXT,
RETRIED, REFUSED, ADJUSTABLE, UNSUPPORTED).

The message is still the service's own untrusted text: renderers draw it as such."""

from __future__ import annotations

import base64
import re

import msgspec

from convy.words import Shortened

MOST_SHOWN = 300
"""The most characters of a service's message kept (one line)."""
SECRET_LENGTH = 8
"""The shortest value masked as a secret: shorter ones would corrupt every message for nothing."""
MASK = "***"

CONTEXT = re.compile(
    r"context[ _](length|window|size)|maximum context|context_length_exceeded|too many tokens"
    r"|prompt is too long|exceeds? the (available )?context|n_ctx",
    re.IGNORECASE,
)
"""How servers say that the request does not fit the model's context."""
RETRIED = frozenset({429, 500, 502, 503, 504})
"""Error statuses of a model's answer that are asked again within patience (no side effects)."""
REFUSED = frozenset({429, 503})
"""Of those, the ones that say the service is busy (it refused the request unprocessed)."""
ADJUSTABLE = frozenset({400, 422, 500})
"""Error statuses after which a request the server refused by a parameter's name is sent without it."""
UNSUPPORTED = ("unsupported", "not supported", "unrecognized", "unknown", "not allowed", "extra")
"""Words with which a server refuses a parameter by its name."""


class Masked(msgspec.Struct, frozen=True):
    """The secrets (keys, header values) to hide in anything shown: each of 8 characters or more."""

    secrets: tuple[str, ...] = ()

    def text(self, text: str) -> str:
        """`text` with every secret worth masking — and its Basic form, base64 — replaced by `***`
        (longest first)."""
        worth = {s for s in self.secrets if len(s) >= SECRET_LENGTH}
        basic = {base64.b64encode(s.encode()).decode() for s in worth}
        for secret in sorted(worth | basic, key=len, reverse=True):
            text = text.replace(secret, MASK)
        return text


class ErrorBody(msgspec.Struct, frozen=True):
    """The body of an error answer. Its message is the first found of `error.message` (OpenAI,
    Azure, Anthropic, LiteLLM; `error` may also be a string), a top-level `message` (vLLM, older
    OpenAI-compatible servers), `detail` (FastAPI: a string, or a list of errors with `msg`), else
    the start of the body as text. The message is one line of at most 300 characters, secrets
    masked; "" for an empty body."""

    content: bytes
    masked: Masked = Masked()

    def message(self) -> str:
        text = self.found()
        line = " ".join(self.masked.text(text).split())
        return Shortened(line, MOST_SHOWN).shown()

    def found(self) -> str:
        try:
            data = msgspec.json.decode(self.content)
        except msgspec.DecodeError:
            return self.content[:4096].decode("utf-8", errors="replace")
        match data:
            case {"error": {"message": str(message)}} if message.strip():
                return message
            case {"error": str(message)} if message.strip():
                return message
            case {"message": str(message)} if message.strip():
                return message
            case {"detail": str(message)} if message.strip():
                return message
            case {"detail": [*errors]} if errors:
                return "; ".join(Detail(error).text() for error in errors)
            case _:
                return self.content[:4096].decode("utf-8", errors="replace")


class Detail(msgspec.Struct, frozen=True):
    """One error of a FastAPI `detail` list: its `msg` and where (`loc`), else the item as JSON."""

    item: object

    def text(self) -> str:
        match self.item:
            case {"msg": str(message), "loc": [*where]}:
                return f"{'.'.join(str(part) for part in where)}: {message}"
            case {"msg": str(message)}:
                return message
            case str(message):
                return message
            case _:
                return msgspec.json.encode(self.item).decode()
