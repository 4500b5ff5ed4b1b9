"""A LangGraph graph served by `langgraph dev` in the tests: a ReAct agent with one tool,
`order_status`, whose model is the tests' scripted OpenAI-compatible server (MODEL_URL), streamed
(`agent`) or not (`whole`)."""

import os

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent

STATUS = "status: shipped on Monday"


@tool
def order_status(order: str) -> str:
    """Where the order is."""
    return f"order {order} {STATUS}"


model = ChatOpenAI(
    model="scripted", base_url=os.environ["MODEL_URL"], api_key="none", max_retries=0, stream_usage=True
)
graph = create_react_agent(model, [order_status])
whole = create_react_agent(model.model_copy(update={"disable_streaming": True}), [order_status])
"""The same agent with a model that does not stream: its AI messages come whole."""
