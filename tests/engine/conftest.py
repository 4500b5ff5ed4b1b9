"""Fixtures of the engine's tests: the LiteLLM proxy, started once for every test that uses it
(it takes seconds to start), the agent frameworks' own servers, each started once, and Arize
Phoenix's server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers.litellm_proxy import LiteLLMProxy
from tests.servers.ui_servers import UiServer
from tests.support.phoenix import phoenix  # noqa: F401 (Arize Phoenix's server, a fixture)


@pytest.fixture(scope="session")
def litellm_proxy() -> Iterator[LiteLLMProxy]:
    with LiteLLMProxy() as proxy:
        yield proxy


@pytest.fixture(scope="session")
def pydantic_ai_server() -> Iterator[UiServer]:
    """pydantic-ai's AG-UI and Vercel AI adapters (`/ag-ui`, `/chat`), started once."""
    with UiServer("pydantic-ai") as server:
        yield server


@pytest.fixture(scope="session")
def agno_server() -> Iterator[UiServer]:
    """agno AgentOS with its AG-UI interface (`/agui`), started once."""
    with UiServer("agno") as server:
        yield server
