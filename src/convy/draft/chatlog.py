"""Chat logs: JSON Lines, one conversation a line, `{"messages": [{"role", "content"}, …]}` with an
optional `id` and `metadata` (what `--where` looks at); a bad line is skipped with a warning naming
file:line."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import msgspec

from convy.draft.messages import Uttered
from convy.draft.otlp import JsonLines
from convy.draft.recorded import Recorded, Utterance


class ChatLog(msgspec.Struct, frozen=True):
    """A chat log file, as `shown` (its path as given)."""

    lines: JsonLines

    def conversations(self, warnings: list[str]) -> Iterator[Recorded]:
        said = Uttered()
        index = 0
        for number, data in self.lines.objects(warnings):
            where = f"{self.lines.shown}:{number}"
            if not isinstance(data, Mapping) or not isinstance(data.get("messages"), list):
                warnings.append(f"{where}: skipped: no `messages` list")
                continue
            messages = [message for message in data["messages"] if isinstance(message, Mapping)]
            if len(messages) != len(data["messages"]):
                warnings.append(f"{where}: skipped: a message that is not an object")
                continue
            spoken = tuple(Utterance(said.role(message, "user"), said.text(message)) for message in messages)
            metadata = data.get("metadata")
            kept = (
                {str(key): self.text(value) for key, value in metadata.items()}
                if isinstance(metadata, Mapping)
                else {}
            )
            identity = data.get("id")
            yield Recorded(
                origin=self.lines.shown,
                session="" if identity is None else str(identity),
                index=index,
                latest=float(number),
                messages=tuple(message for message in spoken if message.role != "system"),
                kept=kept,
            )
            index += 1

    def text(self, value: object) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return value
        return msgspec.json.encode(value).decode()
