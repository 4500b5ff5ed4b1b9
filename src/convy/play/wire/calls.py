"""The tool calls of a streamed answer, gathered from the events that name them by id (AG-UI's
TOOL_CALL_*, the UI message stream's tool-*): each call's name, its arguments streamed in pieces or
given whole, and its result, kept as steps in the order the calls began."""

from __future__ import annotations

import msgspec

from convy.play.agent import Call, Step
from convy.play.wire.reading import JsonText


class ToolCalls:
    """The calls seen so far, by their id; a call named only by a later event is added then."""

    def __init__(self) -> None:
        self._order: list[str] = []
        self._names: dict[str, str] = {}
        self._arguments: dict[str, list[str]] = {}
        self._results: dict[str, str] = {}

    def began(self, id: object, name: object) -> None:
        """A call began (its name known)."""
        key = self.key(id)
        if isinstance(name, str) and name:
            self._names[key] = name

    def argued(self, id: object, piece: object) -> None:
        """A piece of a call's arguments (JSON text) arrived."""
        if isinstance(piece, str) and piece:
            self._arguments.setdefault(self.key(id), []).append(piece)

    def argued_whole(self, id: object, arguments: object) -> None:
        """A call's whole arguments arrived (a JSON value or its text): they replace the pieces."""
        self._arguments[self.key(id)] = [JsonText(arguments).text]

    def returned(self, id: object, result: object) -> None:
        """A call's result (text, or a JSON value kept as its text)."""
        self._results[self.key(id)] = JsonText(result).text

    def key(self, id: object) -> str:
        key = id if isinstance(id, str) else msgspec.json.encode(id).decode()
        if key not in self._order:
            self._order.append(key)
        return key

    def steps(self) -> tuple[Step, ...]:
        return tuple(
            Call(
                name=self._names.get(key, ""),
                arguments="".join(self._arguments.get(key, [])),
                result=self._results.get(key, ""),
            )
            for key in self._order
        )
