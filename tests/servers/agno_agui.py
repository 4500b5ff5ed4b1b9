"""agno AgentOS with its AG-UI interface, served by uvicorn: run by the Python of the `.venv-agno`
venv (tests/servers/ui_servers.py starts it), never imported by the tests. `python agno_agui.py
PORT MODEL_URL`: an agent on the OpenAI-compatible model at MODEL_URL with one tool,
`order_status` and its sessions in memory, at `POST /agui`; `GET /status` answers when it is up."""

from __future__ import annotations

import sys

import uvicorn
from agno.agent import Agent
from agno.db.in_memory import InMemoryDb
from agno.models.openai.like import OpenAILike
from agno.os import AgentOS
from agno.os.interfaces.agui import AGUI

TOOL_TEXT = "status: shipped on Monday"


def order_status(order: str) -> str:
    """The status of an order."""
    return TOOL_TEXT


def app(model_url: str) -> object:
    model = OpenAILike(id="scripted", base_url=model_url, api_key="sk-not-used")
    # agno's AG-UI takes only the run's new message: the history is the session's, kept in its db
    # under the run's threadId
    agent = Agent(
        name="support",
        id="support",
        model=model,
        tools=[order_status],
        db=InMemoryDb(),
        add_history_to_context=True,
        telemetry=False,
    )
    return AgentOS(agents=[agent], interfaces=[AGUI(agent=agent)], telemetry=False).get_app()


if __name__ == "__main__":
    uvicorn.run(app(sys.argv[2]), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")  # type: ignore[arg-type]
