"""agno's AgentOS with its A2A interface, run by the tests in agno's own virtual environment
(`.venv-agno`: agno's A2A needs a2a-sdk 0.3, ours is 1.x): `python agno_os.py PORT MODEL_URL`
serves one agent, `shop` (named `Shoe Shop`), on 127.0.0.1:PORT, its model the OpenAI-compatible
MODEL_URL (`.../v1`), its sessions in memory with the history of earlier runs in each request.

agno serves the agent's card at `/a2a/agents/shop/.well-known/agent-card.json` (A2A 0.3) and its
JSON-RPC at `/a2a/agents/shop/v1/message:send` and `…/v1/message:stream`. Only agno is imported
here, never convy or the tests."""

from __future__ import annotations

import sys

import uvicorn
from agno.agent import Agent
from agno.db.in_memory import InMemoryDb
from agno.models.openai import OpenAIChat
from agno.os import AgentOS

if __name__ == "__main__":
    port, model_url = int(sys.argv[1]), sys.argv[2]
    agent = Agent(
        id="shop",
        name="Shoe Shop",
        model=OpenAIChat(id="scripted", base_url=model_url, api_key="sk-test"),
        db=InMemoryDb(),
        add_history_to_context=True,
        num_history_runs=10,
    )
    app = AgentOS(agents=[agent], a2a_interface=True, telemetry=False).get_app()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
