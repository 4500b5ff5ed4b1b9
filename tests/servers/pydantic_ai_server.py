"""pydantic-ai's own AG-UI and Vercel AI adapters served by uvicorn: run by the Python of the
`.venv-pydantic-ai` venv (tests/servers/ui_servers.py starts it), never imported by the tests.
`python pydantic_ai_server.py PORT MODEL_URL`: an agent on the OpenAI-compatible model at
MODEL_URL with one tool, `order_status`, at `POST /ag-ui` (AGUIAdapter) and `POST /chat`
(VercelAIAdapter); `GET /health` answers when it is up."""

from __future__ import annotations

import sys

import uvicorn
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.ui.ag_ui import AGUIAdapter
from pydantic_ai.ui.vercel_ai import VercelAIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

TOOL_TEXT = "status: shipped on Monday"


def app(model_url: str) -> Starlette:
    model = OpenAIChatModel("scripted", provider=OpenAIProvider(base_url=model_url, api_key="sk-not-used"))
    agent = Agent(model, instructions="You look up orders.")

    @agent.tool_plain
    def order_status(order: str) -> str:
        """The status of an order."""
        return TOOL_TEXT

    async def ag_ui(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent)

    async def chat(request: Request) -> Response:
        return await VercelAIAdapter.dispatch_request(request, agent=agent)

    async def health(request: Request) -> Response:
        return PlainTextResponse("ok")

    routes = [
        Route("/ag-ui", ag_ui, methods=["POST"]),
        Route("/chat", chat, methods=["POST"]),
        Route("/health", health),
    ]
    return Starlette(routes=routes)


if __name__ == "__main__":
    uvicorn.run(app(sys.argv[2]), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
