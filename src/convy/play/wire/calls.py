"""A streamed UI answer gathered (AG-UI's events, the UI message stream's parts): its text and
reasoning deltas, and its tool calls from the events that name them by id (TOOL_CALL_*, tool-*):
each call's name, its arguments streamed in pieces or given whole, and its result, kept as steps in
the order the calls began."""

from __future__ import annotations

import msgspec

from convy.play.agent import Answer, Call, Step, Thought
from convy.play.wire.reading import AgentReply, JsonText


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


class Gathered:
    """A UI answer so far: the text deltas, the reasoning deltas, and `calls`."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._thought: list[str] = []
        self.calls = ToolCalls()

    def said(self, delta: object) -> str:
        """A piece of the answer's text (what it adds: "" for none)."""
        if isinstance(delta, str) and delta:
            self._parts.append(delta)
            return delta
        return ""

    def thought(self, delta: object) -> None:
        """A piece of the reasoning."""
        if isinstance(delta, str):
            self._thought.append(delta)

    def reply(self) -> AgentReply:
        thought: tuple[Step, ...] = (Thought(text="".join(self._thought)),) if self._thought else ()
        return AgentReply(answer=Answer(text="".join(self._parts), steps=(*thought, *self.calls.steps())))
