"""Fixtures of the engine's tests: the LiteLLM proxy, started once for every test that uses it
(it takes seconds to start)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers.litellm_proxy import LiteLLMProxy


@pytest.fixture(scope="session")
def litellm_proxy() -> Iterator[LiteLLMProxy]:
    with LiteLLMProxy() as proxy:
        yield proxy
