"""PydanticShop: a real pydantic-ai agent served over A2A by fasta2a (`agent_to_a2a`: its Starlette
app, in-memory storage and broker, its worker), with uvicorn in a thread of its own on a free
loopback port; the agent's model is a ModelServer of the test (OpenAI-compatible, deterministic).

fasta2a answers `message/send` (and `SendMessage`) at once with the task `submitted` and runs it in
the background: a client must ask after it (`tasks/get`, `GetTask`); `message/stream` streams it.
Its card at `/.well-known/agent-card.json` names A2A 1.0, `Shoe Shop` and VERSION."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from fasta2a.pydantic_ai import agent_to_a2a
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from tests.servers.asgi import Served

NAME = "Shoe Shop"
VERSION = "3.1.0"


@dataclass
class PydanticShop:
    """A running pydantic-ai A2A agent whose model is at `model_url` (`.../v1`); `url` is its
    JSON-RPC endpoint once started. Use with `with`."""

    model_url: str
    _served: Served | None = None

    @property
    def url(self) -> str:
        return f"{self._served.url}/" if self._served is not None else ""

    def __enter__(self) -> Self:
        model = OpenAIChatModel(
            "scripted", provider=OpenAIProvider(base_url=self.model_url, api_key="sk-test")
        )
        app = agent_to_a2a(Agent(model, name="shop"), name=NAME, version=VERSION)
        self._served = Served(app, lifespan=True)
        self._served.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._served is not None:
            self._served.stop()
