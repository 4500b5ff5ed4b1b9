"""One FakeGitHub for the session, reset to a new world for every test that asks for it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.servers.github import FakeGitHub


@pytest.fixture(scope="session")
def github_servers() -> Iterator[FakeGitHub]:
    with FakeGitHub() as servers:
        yield servers


@pytest.fixture
def fake(github_servers: FakeGitHub) -> FakeGitHub:
    github_servers.reset()
    return github_servers


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=5) as http:
        yield http
