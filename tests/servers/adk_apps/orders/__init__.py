"""An ADK app served by `adk api_server` in the tests (see agent.py)."""

from . import agent  # noqa: F401
