"""The OpenAI Responses API (DESIGN §14.1): to be written."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from convy.play.wire.dialect import Ask, Fold
from convy.play.wire.reading import Reply
from convy.play.wire.spec import AgentSpec


class Responses(msgspec.Struct, frozen=True):
    spec: AgentSpec
    shown: str

    def body(self, ask: Ask) -> object:
        raise NotImplementedError

    def headers(self) -> Mapping[str, str]:
        return {}

    def read(self, data: object) -> Reply:
        raise NotImplementedError

    def fold(self) -> Fold:
        raise NotImplementedError
