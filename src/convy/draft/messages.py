"""The messages a model call's recording holds, whichever convention wrote them: OTLP's typed
values made plain, then the GenAI semantic conventions (`gen_ai.input.messages` with their parts,
the older `gen_ai.prompt.N.*` and per-message events) or OpenInference's
(`llm.input_messages.N.message.*`). A span that has several sets is read once, by the first."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

import msgspec

from convy.draft.recorded import ROLES

Pair = tuple[str, str]
"""A message as read: (role, text)."""

INDEXED = re.compile(
    r"^(?P<prefix>llm\.input_messages|llm\.output_messages|gen_ai\.prompt|gen_ai\.completion)\.(?P<n>\d+)\.(?P<rest>.+)$"
)
"""An attribute of one message of a list flattened into keys: its list, its index, its field."""

MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
"""The older GenAI events, one a message, and the role each stands for (`gen_ai.choice`: an answer)."""

DETAILS = "gen_ai.client.inference.operation.details"
"""The GenAI event that holds a call's messages as structured values."""

EVENT_NAMES = {
    *MESSAGE_EVENTS,
    "gen_ai.choice",
    DETAILS,
    "gen_ai.content.prompt",
    "gen_ai.content.completion",
}
"""The events and log records that hold a model call's messages."""


class Typed(msgspec.Struct, frozen=True):
    """OTLP JSON's typed values (`{"stringValue": …}`, `{"arrayValue": {"values": […]}}`,
    `{"kvlistValue": …}`), made plain Python values."""

    def plain(self, value: object) -> object:
        if not isinstance(value, Mapping):
            return value
        for kind in ("stringValue", "boolValue", "doubleValue"):
            if kind in value:
                return value[kind]
        if "intValue" in value:
            try:
                return int(value["intValue"])
            except (TypeError, ValueError):
                return value["intValue"]
        if "arrayValue" in value:
            array = value["arrayValue"]
            items = array.get("values", []) if isinstance(array, Mapping) else []
            return [self.plain(item) for item in items]
        if "kvlistValue" in value:
            listed = value["kvlistValue"]
            pairs = listed.get("values", []) if isinstance(listed, Mapping) else []
            return self.pairs(pairs)
        if "bytesValue" in value:
            return value["bytesValue"]
        return None

    def pairs(self, pairs: object) -> dict[str, object]:
        """OTLP's `[{"key", "value"}]` as a dict of plain values."""
        if not isinstance(pairs, list):
            return {}
        return {
            str(pair["key"]): self.plain(pair.get("value"))
            for pair in pairs
            if isinstance(pair, Mapping) and "key" in pair
        }


class Flattened(msgspec.Struct, frozen=True):
    """Nested attributes (Phoenix gives `llm: {input_messages: [...]}`) as dotted keys."""

    def of(self, values: Mapping[str, object]) -> dict[str, object]:
        flat: dict[str, object] = {}
        self._into(flat, "", values)
        return flat

    def _into(self, flat: dict[str, object], prefix: str, value: object) -> None:
        if isinstance(value, Mapping) and (not prefix or not self._message_list(prefix)):
            for key, inner in value.items():
                self._into(flat, f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, list) and prefix.endswith(("input_messages", "output_messages", "contents")):
            for index, inner in enumerate(value):
                self._into(flat, f"{prefix}.{index}", inner)
        else:
            flat[prefix] = value

    def _message_list(self, prefix: str) -> bool:
        return prefix in {"gen_ai.input.messages", "gen_ai.output.messages"}


class Uttered(msgspec.Struct, frozen=True):
    """A message's text, from a string, a list of content parts (`{"type": "text", "text"|"content"}`)
    or a message's `parts`; tool calls and their results have none."""

    def text(self, message: Mapping[str, object]) -> str:
        if "parts" in message:
            return self.parts(message["parts"])
        content = message.get("content")
        if content is None and "message" in message and isinstance(message["message"], Mapping):
            return self.text(message["message"])
        return self.content(content)

    def content(self, content: object) -> str:
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return self.parts(content)
        return ""

    def parts(self, parts: object) -> str:
        if isinstance(parts, str):
            return parts
        if not isinstance(parts, list):
            return ""
        texts = []
        for part in parts:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and part.get("type", "text") == "text":
                text = part.get("content", part.get("text", ""))
                if isinstance(text, str):
                    texts.append(text)
        return "".join(texts)

    def role(self, message: Mapping[str, object], default: str) -> str:
        role = message.get("role")
        inner = message.get("message")
        if not isinstance(role, str) and isinstance(inner, Mapping):
            role = inner.get("role")
        return ROLES.get(str(role).lower(), default) if isinstance(role, str) else default


class Conventions(msgspec.Struct, frozen=True):
    """A model call's messages read from its attributes (plain values, dotted keys), or from its
    events: (asked, answered), both empty when it holds none."""

    def attributes(self, values: Mapping[str, object]) -> tuple[list[Pair], list[Pair]]:
        asked = self.listed(values.get("gen_ai.input.messages"), "user")
        answered = self.listed(values.get("gen_ai.output.messages"), "assistant")
        if asked or answered:
            return asked, answered
        indexed: dict[str, dict[int, dict[str, object]]] = {}
        for key, value in values.items():
            found = INDEXED.match(key)
            if found:
                fields = indexed.setdefault(found["prefix"], {}).setdefault(int(found["n"]), {})
                fields[found["rest"]] = value
        for inputs, outputs in (
            ("llm.input_messages", "llm.output_messages"),
            ("gen_ai.prompt", "gen_ai.completion"),
        ):
            asked = self.numbered(indexed.get(inputs, {}), "user")
            answered = self.numbered(indexed.get(outputs, {}), "assistant")
            if asked or answered:
                return asked, answered
        return [], []

    def listed(self, value: object, default: str) -> list[Pair]:
        """A list of messages, as a JSON string or as structured values."""
        if isinstance(value, str):
            text = value
            try:
                value = json.loads(text)
            except ValueError:
                return [(default, text)] if text.strip() else []
        if not isinstance(value, list):
            return []
        said = Uttered()
        return [
            (said.role(message, default), said.text(message))
            for message in value
            if isinstance(message, Mapping)
        ]

    def numbered(self, fields: Mapping[int, Mapping[str, object]], default: str) -> list[Pair]:
        said = Uttered()
        found = []
        for _, message in sorted(fields.items()):
            role = message.get("message.role", message.get("role"))
            text = message.get("message.content", message.get("content"))
            if not isinstance(text, str):
                parts = sorted(
                    (key, value)
                    for key, value in message.items()
                    if key.startswith("message.contents.") and key.endswith("message_content.text")
                )
                text = "".join(str(value) for _, value in parts)
            picked = ROLES.get(str(role).lower(), default) if isinstance(role, str) else default
            found.append((picked, said.content(text)))
        return found

    def events(self, events: Iterable[tuple[str, Mapping[str, object]]]) -> tuple[list[Pair], list[Pair]]:
        """Per-message events (name, attributes or body): `gen_ai.user.message` and the like asked,
        `gen_ai.choice` answered; the details event holds both lists; older `gen_ai.content.prompt`
        and `gen_ai.content.completion` hold a list each."""
        asked: list[Pair] = []
        answered: list[Pair] = []
        said = Uttered()
        for name, body in events:
            if name == DETAILS:
                more, out = self.details(body)
                asked += more
                answered += out
            elif name in MESSAGE_EVENTS:
                content = body.get("gen_ai.event.content", body.get("content"))
                if isinstance(content, str) and content.startswith("{"):
                    try:
                        decoded = json.loads(content)
                    except ValueError:
                        decoded = None
                    if isinstance(decoded, Mapping):
                        asked.append((MESSAGE_EVENTS[name], said.text(decoded)))
                        continue
                asked.append((MESSAGE_EVENTS[name], said.text(body)))
            elif name == "gen_ai.choice":
                answered.append((said.role(body, "assistant"), said.text(body)))
            elif name == "gen_ai.content.prompt":
                asked += self.listed(body.get("gen_ai.prompt"), "user")
            elif name == "gen_ai.content.completion":
                answered += self.listed(body.get("gen_ai.completion"), "assistant")
        return asked, answered

    def details(self, body: Mapping[str, object]) -> tuple[list[Pair], list[Pair]]:
        return (
            self.listed(body.get("gen_ai.input.messages"), "user"),
            self.listed(body.get("gen_ai.output.messages"), "assistant"),
        )
