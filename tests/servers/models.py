"""ModelServer: a local OpenAI-compatible chat-completions endpoint whose answers a test scripts.

`answer(request)` gets each request's JSON body and returns the reply's content (a string), a
Called tool (the reply calls it), or a Canned HTTP response (an error status, Retry-After, a body
that is not a completion...). A request with `stream: true` gets its reply as chat-completion chunks
(server-sent events: the text in two pieces, or the tool call's name then its arguments). Every
request is recorded (`requests`, `headers`); the ones answered with a completion also in
`processed`. Usage is reported from lengths: prompt_tokens is the characters of all messages'
content, completion_tokens the characters of the reply; a stream's chunks end with the finish, the
usage when `stream_options.include_usage` asks for it, and `[DONE]`, as agent frameworks ask a
model."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

from convy.demo.localserver import LocalServer

Request = dict[str, Any]


@dataclass(frozen=True)
class Canned:
    """An HTTP response sent as it is: `body` bytes, or any other value as JSON."""

    status: int
    body: Any = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def busy(cls, retry_after: str | None = None, status: int = 429) -> Canned:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls(status, {"error": {"message": "Rate limit reached", "type": "rate_limit"}}, headers)

    def triple(self) -> tuple[int, dict[str, str], bytes]:
        if isinstance(self.body, bytes):
            return self.status, {"Content-Type": "text/plain", **self.headers}, self.body
        return (
            self.status,
            {"Content-Type": "application/json", **self.headers},
            json.dumps(self.body).encode(),
        )


@dataclass(frozen=True)
class Called:
    """A reply that calls the tool `name` with `arguments` (a JSON string), and says nothing."""

    name: str
    arguments: str
    id: str = "call-1"

    def message(self) -> dict[str, Any]:
        call = {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    def deltas(self) -> list[dict[str, Any]]:
        named = {
            "index": 0,
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": ""},
        }
        given = {"index": 0, "function": {"arguments": self.arguments}}
        return [{"role": "assistant", "tool_calls": [named]}, {"tool_calls": [given]}]


def said(message: dict[str, Any]) -> str:
    """A message's text: its content as a string, or its text parts joined."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


Answer = Callable[[Request], "str | Called | Canned"]


class ModelServer:
    """A running scripted model; `url` is its base URL (`.../v1`), as `model-url` takes it."""

    def __init__(self, answer: Answer, usage: bool = True) -> None:
        self._answer = answer
        self._usage = usage
        self._lock = threading.Lock()
        self._server = LocalServer(self.route)
        self.requests: list[Request] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.processed: list[Request] = []

    @property
    def url(self) -> str:
        return self._server.url + "/v1"

    def __enter__(self) -> Self:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    def route(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if method != "POST" or not path.split("?")[0].endswith("/v1/chat/completions"):
            return Canned(404, {"error": {"message": f"no route {method} {path}"}}).triple()
        request: Request = json.loads(body)
        with self._lock:
            self.requests.append(request)
            self.headers.append(headers)
            self.paths.append(path)
        answered = self._answer(request)
        if isinstance(answered, Canned):
            return answered.triple()
        with self._lock:
            self.processed.append(request)
        message = (
            answered.message() if isinstance(answered, Called) else {"role": "assistant", "content": answered}
        )
        finish = "tool_calls" if isinstance(answered, Called) else "stop"
        usage = {
            "prompt_tokens": sum(len(said(sent)) for sent in request["messages"]),
            "completion_tokens": len(said(message)),
            "total_tokens": 0,
        }
        if request.get("stream"):
            return 200, {"Content-Type": "text/event-stream"}, self.chunks(request, answered, finish, usage)
        completion: dict[str, Any] = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "model": request.get("model", ""),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }
        if self._usage:
            completion["usage"] = usage
        return 200, {"Content-Type": "application/json"}, json.dumps(completion).encode()

    def chunks(self, request: Request, answered: str | Called, finish: str, usage: dict[str, int]) -> bytes:
        """A streamed reply: its deltas, a last chunk with the finish reason, the usage when asked."""
        if isinstance(answered, Called):
            deltas = answered.deltas()
        else:
            half = len(answered) // 2
            deltas = [{"role": "assistant", "content": answered[:half]}, {"content": answered[half:]}]
        base = {"id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion.chunk"}
        base["model"] = request.get("model", "")
        chunks = [
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas
        ]
        chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        if self._usage and (request.get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "choices": [], "usage": usage})
        events = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
        return "".join(events).encode()


# Error answers as real servers send them, for the model server above to give back.

LLAMA_CPP_JSON_SCHEMA = Canned(
    500,
    {
        "error": {
            "message": "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
            "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]",
            "type": "internal_server_error",
        }
    },
)
"""llama-cpp-python's server asked for `response_format: json_schema` (it takes json_object + schema)."""

VLLM_OLD_ERROR = Canned(
    400,
    {
        "object": "error",
        "message": "json_schema is not supported by this model",
        "type": "BadRequestError",
        "code": 400,
    },
)
"""An older vLLM's error body: the message at the top level."""

OPENAI_MAX_TOKENS = Canned(
    400,
    {
        "error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
    },
)
"""OpenAI's answer to max_tokens from a reasoning model."""

OPENAI_TEMPERATURE = Canned(
    400,
    {
        "error": {
            "message": "Unsupported value: 'temperature' does not support 0 with this model. "
            "Only the default (1) value is supported.",
            "type": "invalid_request_error",
            "param": "temperature",
            "code": "unsupported_value",
        }
    },
)
"""OpenAI's answer to temperature 0 from a reasoning model."""


def litellm_busy(seconds: str = "60") -> Canned:
    """LiteLLM proxy's router, out of deployments: a 429 whose only hint is llm_provider-retry-after."""
    return Canned(
        429,
        {
            "error": {
                "message": "No deployments available for selected model",
                "type": "None",
                "param": None,
                "code": "429",
            }
        },
        {"llm_provider-retry-after": seconds},
    )


class LikeLlamaCpp:
    """Answers as llama-cpp-python's server does about structured output: HTTP 500 for json_schema,
    and `answer` for anything else (json_object with or without a schema, or none)."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer

    def __call__(self, request: Request) -> str | Canned:
        if request.get("response_format", {}).get("type") == "json_schema":
            return LLAMA_CPP_JSON_SCHEMA
        return self.answer(request)
