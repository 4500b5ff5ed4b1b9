"""What an A2A agent answered, read alike in both wire forms (see docs/agents.md): a JSON-RPC result or a
streamed event's (a message, a task, a status or artifact update, a task asked after), its parts'
text and a task's state (named the 0.3 way) gathered into the text an answer says, with the
contextId to carry on and, for a task still at work, its id to ask after."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from convy.play.agent import AgentFailure, Answer, Usage
from convy.play.errorbody import ErrorBody, Masked
from convy.play.wire.reading import AgentReply

PIECES = {"message": "message", "task": "task", "statusUpdate": "status", "artifactUpdate": "artifact"}
"""A 1.0 result's keys and what each holds; a 1.0 result (or stream event) holds one of them."""
KINDS = {"message": "message", "task": "task", "status-update": "status", "artifact-update": "artifact"}
"""A 0.3 result's `kind` and what it is; a 0.3 result is the thing itself."""
INTERIM = frozenset({"", "unspecified", "unknown", "submitted", "working"})
"""States of a task still at work: their status messages are never the answer."""
ENDED_BADLY = frozenset({"failed", "rejected", "canceled"})
"""States in which a task gave no answer: the attempt fails with the status text."""
AT_WORK = frozenset({"submitted", "working"})
"""States of a task that is not done yet: it is asked after (tasks/get) until it is."""


class RpcResult(msgspec.Struct, frozen=True):
    """A JSON-RPC `result` of an A2A agent, in the 1.0 form (`{"message": …}`, `{"task": …}`,
    `{"statusUpdate": …}`, `{"artifactUpdate": …}`) or the 0.3 form (the object itself, with its
    `kind`); a 1.0 `GetTask` result is the Task itself, with neither (its `id` and `status`)."""

    value: object

    def pieces(self) -> Iterator[tuple[str, dict[str, object]]]:
        """What it holds: ("message" | "task" | "status" | "artifact", the object)."""
        value = self.value
        if not isinstance(value, dict):
            return
        kind = value.get("kind")
        if isinstance(kind, str) and kind in KINDS:
            yield KINDS[kind], value
            return
        pieces = [(name, value[key]) for key, name in PIECES.items() if isinstance(value.get(key), dict)]
        if not pieces and "kind" not in value and "id" in value and isinstance(value.get("status"), dict):
            pieces = [("task", value)]
        yield from pieces


class Parts(msgspec.Struct, frozen=True):
    """The `parts` of a Message or an Artifact: the texts of its text parts (`{"text"}` in 1.0,
    `{"kind": "text", "text"}` in 0.3), in order; files and data are not said."""

    value: object

    def texts(self) -> list[str]:
        if not isinstance(self.value, list):
            return []
        parts = [part for part in self.value if isinstance(part, dict) and part.get("kind", "text") == "text"]
        return [part["text"] for part in parts if isinstance(part.get("text"), str)]


class History(msgspec.Struct, frozen=True):
    """A Task's `history`: the messages of the conversation so far, as the server keeps them."""

    value: object

    def answer(self) -> list[str]:
        """The text of its agent messages when it holds no user message — a server that puts its
        answer there (agno writes its reply as the task's only history message); else nothing,
        since a history that holds the user's message holds interim status messages too."""
        if not isinstance(self.value, list):
            return []
        messages = [message for message in self.value if isinstance(message, dict)]
        if any(Role(message.get("role")).name == "user" for message in messages):
            return []
        agents = [message for message in messages if Role(message.get("role")).name == "agent"]
        return [text for message in agents for text in Parts(message.get("parts")).texts()]


class Role(msgspec.Struct, frozen=True):
    """A message's role as 0.3 names it: `ROLE_AGENT` (1.0) is `agent`."""

    value: object

    @property
    def name(self) -> str:
        return self.value.removeprefix("ROLE_").lower() if isinstance(self.value, str) else ""


class State(msgspec.Struct, frozen=True):
    """A task's state as 0.3 names it: `TASK_STATE_INPUT_REQUIRED` (1.0) is `input-required`."""

    value: object

    @property
    def name(self) -> str:
        if not isinstance(self.value, str):
            return ""
        return self.value.removeprefix("TASK_STATE_").lower().replace("_", "-")


class TaskText:
    """What one answer of an A2A agent says, taken from its result or its events in order: a
    Message's text parts (joined by new lines, as the SDK joins them; Messages streamed one after
    another under one messageId are chunks of one, joined with "", as agno streams); else a Task's artifacts,
    each artifact's text parts joined with "" (the chunks of one artifact arrive as separate parts,
    or as artifact updates that `append`), the artifacts by new lines; else the text of the task's
    final status message; else, when its history holds no user message, the history's agent
    messages (History). Its interim (`working`) status messages are never said. The contextId is
    carried to the next turn, never a task id; a task still at work (`unfinished`) has its id kept
    to be asked after. A task that ended failed, rejected or canceled fails the attempt
    (`a2a_task_<state>`) with its status text."""

    def __init__(self, shown: str, masked: Masked) -> None:
        self._shown = shown
        self._masked = masked
        self._said: list[str] | None = None
        self._artifacts: dict[str, list[str]] = {}
        self._state = ""
        self._status: list[str] = []
        self._history: list[str] = []
        self._message = ""
        self._task = ""
        self._context = ""
        self._usage: Usage | None = None
        self.seen = False
        """Whether a Message, Task or update was taken at all."""

    def take(self, result: object) -> str:
        """Take a result (or a streamed event's); the text it added to the answer."""
        added: list[str] = []
        for kind, piece in RpcResult(result).pieces():
            self.seen = True
            context = piece.get("contextId")
            if isinstance(context, str) and context:
                self._context = context
            task = piece.get("id" if kind == "task" else "taskId")
            if kind != "message" and isinstance(task, str) and task:
                self._task = task
            match kind:
                case "message":
                    texts = Parts(piece.get("parts")).texts()
                    key = piece.get("messageId")
                    key = key if isinstance(key, str) else ""
                    if self._said is not None and key and key == self._message:
                        last = self._said[-1:] or [""]
                        self._said = [*self._said[:-1], last[0] + "".join(texts)]
                    else:
                        self._said = texts
                    self._message = key
                    added += texts
                case "task":
                    artifacts = piece.get("artifacts")
                    for artifact in artifacts if isinstance(artifacts, list) else ():
                        added += self.artifact(artifact, append=False)
                    self._history = History(piece.get("history")).answer()
                    self.status(piece.get("status"))
                case "status":
                    self.status(piece.get("status"))
                case _:
                    added += self.artifact(piece.get("artifact"), append=piece.get("append") is True)
        return "".join(added)

    @property
    def unfinished(self) -> tuple[str, str]:
        """(state, task id) of a task still at work (submitted, working) that has an id to ask
        after; ("", "") for an answer that is done."""
        if self._said is None and self._state in AT_WORK and self._task:
            return self._state, self._task
        return "", ""

    def counted(self, usage: Usage | None) -> None:
        """The tokens an answer (or the last event that had them) reported."""
        if usage is not None:
            self._usage = usage

    def artifact(self, artifact: object, append: bool) -> list[str]:
        if not isinstance(artifact, dict):
            return []
        key = artifact.get("artifactId")
        key = key if isinstance(key, str) else f"#{len(self._artifacts)}"
        texts = Parts(artifact.get("parts")).texts()
        if append and key in self._artifacts:
            self._artifacts[key] += texts
        else:
            self._artifacts[key] = texts
        return texts

    def status(self, status: object) -> None:
        if not isinstance(status, dict):
            return
        state = State(status.get("state")).name
        self._state = state or self._state
        if state not in INTERIM:
            message = status.get("message")
            self._status = Parts(message.get("parts")).texts() if isinstance(message, dict) else []

    def reply(self) -> AgentReply:
        """The answer; AgentFailure when the task ended without one (failed, rejected, canceled)."""
        if self._state in ENDED_BADLY:
            said = self.said()
            raise AgentFailure(
                f"a2a_task_{self._state}",
                f"the task at {self._shown} ended {self._state}" + (f": {said}" if said else ""),
                message=said,
            )
        return AgentReply(answer=Answer(text=self.text(), usage=self._usage), carry=self._context)

    def text(self) -> str:
        if self._said is not None:
            return "\n".join(self._said)
        artifacts = ("".join(parts) for parts in self._artifacts.values())
        said = "\n".join(text for text in artifacts if text) or "\n".join(self._status)
        return said or "\n".join(self._history)

    def said(self) -> str:
        """The final status message as the agent's own words: one line, secrets masked."""
        status = "\n".join(self._status)
        return ErrorBody(msgspec.json.encode({"message": status}), self._masked).message() if status else ""
