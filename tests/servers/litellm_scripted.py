"""A scripted model provider for the LiteLLM proxy, loaded only inside the proxy's own process
(named in its config's `custom_provider_map`), so the proxy streams real chunks and real Responses
API events of its own making, offline. Every answer is `You said: <latest user message> (<n>
user messages)`; its usage is the latest message's length in, the answer's length out. Streamed,
the answer comes in pieces of 4 characters. By the model's name (after `convy/`):

* `scripted` — the answer;
* `tools` — the answer, then a call of `lookup` with `{"order": 4411}`, its arguments streamed in
  two pieces;
* `broken` — two pieces, then the model fails (`the scripted model fell over`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import litellm
from litellm import CustomLLM, ModelResponse
from litellm.types.utils import GenericStreamingChunk

ARGUMENTS = '{"order": 4411}'
CALL = {"id": "call_4411", "type": "function", "function": {"name": "lookup", "arguments": ARGUMENTS}}
BROKEN = "the scripted model fell over"


def said(messages: list[dict[str, Any]]) -> str:
    users = [str(m.get("content")) for m in messages if m.get("role") == "user"]
    return f"You said: {users[-1] if users else ''} ({len(users)} user messages)"


def usage(messages: list[dict[str, Any]]) -> dict[str, int]:
    users = [str(m.get("content")) for m in messages if m.get("role") == "user"]
    latest, text = (users[-1] if users else ""), said(messages)
    return {
        "prompt_tokens": len(latest),
        "completion_tokens": len(text),
        "total_tokens": len(latest) + len(text),
    }


def chunk(text: str = "", tool: dict[str, Any] | None = None, **ended: Any) -> GenericStreamingChunk:
    return GenericStreamingChunk(
        text=text,
        tool_use=tool,
        is_finished=bool(ended),
        finish_reason=ended.get("finish_reason", ""),
        usage=ended.get("usage"),
        index=0,
    )


class Scripted(CustomLLM):
    """The scripted provider."""

    def completion(
        self, model: str, messages: list[dict[str, Any]], *args: Any, **kwargs: Any
    ) -> ModelResponse:
        message: dict[str, Any] = {"role": "assistant", "content": said(messages)}
        if model == "tools":
            message["tool_calls"] = [CALL]
        if model == "broken":
            raise litellm.InternalServerError(BROKEN, llm_provider="convy", model=model)
        return ModelResponse(
            model=model,
            choices=[{"index": 0, "finish_reason": "stop", "message": message}],
            usage=usage(messages),
        )

    async def acompletion(
        self, model: str, messages: list[dict[str, Any]], *args: Any, **kwargs: Any
    ) -> ModelResponse:
        return self.completion(model, messages)

    def pieces(self, model: str, messages: list[dict[str, Any]]) -> Iterator[GenericStreamingChunk]:
        text = said(messages)
        for start in range(0, len(text), 4):
            if model == "broken" and start == 8:
                raise litellm.InternalServerError(BROKEN, llm_provider="convy", model=model)
            yield chunk(text[start : start + 4])
        if model == "tools":
            first = {"name": "lookup", "arguments": ARGUMENTS[:5]}
            rest = {"name": None, "arguments": ARGUMENTS[5:]}
            yield chunk(tool={"id": "call_4411", "type": "function", "function": first, "index": 0})
            yield chunk(tool={"id": None, "type": "function", "function": rest, "index": 0})
        yield chunk(finish_reason="stop", usage=usage(messages))

    def streaming(
        self, model: str, messages: list[dict[str, Any]], *args: Any, **kwargs: Any
    ) -> Iterator[GenericStreamingChunk]:
        yield from self.pieces(model, messages)

    async def astreaming(
        self, model: str, messages: list[dict[str, Any]], *args: Any, **kwargs: Any
    ) -> AsyncIterator[GenericStreamingChunk]:
        for piece in self.pieces(model, messages):
            yield piece


scripted = Scripted()
