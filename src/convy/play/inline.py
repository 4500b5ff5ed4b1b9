"""A model for servers whose chat template has no system role (`system-role: inline`): the system
text put at the start of the first user message."""

from __future__ import annotations

import msgspec

from convy.play.agent import Message
from convy.play.model import Model, Reply, Schema


class Inline(msgspec.Struct, frozen=True):
    """The same model for servers whose chat template has no system role (`system-role: inline`):
    a leading system message becomes the start of the first user message."""

    model: Model

    @property
    def name(self) -> str:
        return self.model.name

    def messages(self, messages: tuple[Message, ...]) -> tuple[Message, ...]:
        """`messages` with the system text (if any) put before the first user message's."""
        if not messages or messages[0].role != "system":
            return messages
        system, rest = messages[0].content, messages[1:]
        if rest and rest[0].role == "user":
            return (Message(role="user", content=f"{system}\n\n{rest[0].content}"), *rest[1:])
        return (Message(role="user", content=system), *rest)

    async def reply(self, messages: tuple[Message, ...], json: bool | Schema = False) -> Reply:
        return await self.model.reply(self.messages(messages), json)
