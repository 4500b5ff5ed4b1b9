"""A2A (DESIGN §14.1): to be written."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import httpx

from convy.play.wire.dialect import Ask, Fold
from convy.play.wire.oauth import Tokens
from convy.play.wire.reading import Reply
from convy.play.wire.spec import AgentSpec


class A2a:
    def __init__(self, spec: AgentSpec, shown: str) -> None:
        self.spec = spec
        self.shown = shown

    async def ready(
        self, client: Callable[[], httpx.AsyncClient], headers: httpx.Headers, tokens: Tokens | None
    ) -> str:
        raise NotImplementedError

    def body(self, ask: Ask) -> object:
        raise NotImplementedError

    def headers(self) -> Mapping[str, str]:
        return {}

    def read(self, data: object) -> Reply:
        raise NotImplementedError

    def fold(self) -> Fold:
        raise NotImplementedError
