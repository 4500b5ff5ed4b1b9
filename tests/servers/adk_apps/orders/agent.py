"""A Google ADK agent served by `adk api_server` in the tests: one tool, `order_status`, and the
tests' scripted OpenAI-compatible server as its model (MODEL_URL, through LiteLLM)."""

import os

from google.adk.agents import Agent
from google.adk.models.lite_llm import LiteLlm

STATUS = "status: shipped on Monday"


def order_status(order: str) -> str:
    """Where the order is."""
    return f"order {order} {STATUS}"


root_agent = Agent(
    name="orders",
    model=LiteLlm(model="openai/scripted", api_base=os.environ["MODEL_URL"], api_key="none"),
    instruction="Answer about orders.",
    tools=[order_status],
)
