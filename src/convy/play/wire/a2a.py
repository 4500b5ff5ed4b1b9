"""A2A (decision 22) as the official a2a-sdk speaks it: JSON-RPC 2.0 over HTTP POST, in the 1.0 form
or the 0.3 form.

The version to speak is named by the agent file (`version`), else by the agent card (a2a_card.py),
else 1.0 is tried and a refusal (-32601 method not found, -32009 version not supported, or an HTTP
400 whose words name the method) teaches 0.3 once for the whole run, the refused turn sent again.
A task still at work is asked after with `tasks/get` (`GetTask`). What an answer says is read by
a2a_answer.py, whole or event by event."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NoReturn

import httpx
import msgspec

from convy.play.agent import AgentFailure
from convy.play.errorbody import ErrorBody, Masked
from convy.play.trace import MESSAGE_IDS
from convy.play.wire.a2a_answer import TaskText
from convy.play.wire.a2a_card import CardRead, Number
from convy.play.wire.dialect import Ask, Fold, Pending, Resend
from convy.play.wire.oauth import AccessToken
from convy.play.wire.reading import AgentReply
from convy.play.wire.spec import AgentSpec
from convy.play.wire.stream import Event

VERSION_HEADER = "A2A-Version"
REFUSED = frozenset({-32601, -32009})
"""JSON-RPC errors of a server that does not speak the form sent: method not found (a 0.3
server asked `SendMessage`), version not supported (a 1.x server that got no `A2A-Version`)."""


class Form(msgspec.Struct, frozen=True, kw_only=True):
    """How a version of A2A writes a turn's request."""

    number: Number
    send: str
    """The JSON-RPC method of a whole answer."""
    stream: str
    """The method of a streamed one."""
    get: str
    """The method that asks after a task."""
    role: str
    kinds: bool
    """Whether the message and its parts say their `kind` (0.3)."""

    def request(self, id: str, text: str, context: str, streamed: bool) -> dict[str, object]:
        """A turn's JSON-RPC request: the user's `text` as a new message (a new messageId), in the
        conversation `context` (the previous answer's contextId; "" on the first turn)."""
        part: dict[str, object] = {"kind": "text", "text": text} if self.kinds else {"text": text}
        message: dict[str, object] = {"role": self.role, "parts": [part], "messageId": MESSAGE_IDS.fresh()}
        if self.kinds:
            message = {"kind": "message", **message}
        if context:
            message["contextId"] = context
        method = self.stream if streamed else self.send
        return {"jsonrpc": "2.0", "id": id, "method": method, "params": {"message": message}}

    def poll(self, task: str) -> dict[str, object]:
        """The JSON-RPC request that asks after the task `task` (a new request id)."""
        return {"jsonrpc": "2.0", "id": MESSAGE_IDS.fresh(), "method": self.get, "params": {"id": task}}

    def headers(self) -> Mapping[str, str]:
        return {VERSION_HEADER: self.number} if self.number == "1.0" else {}


ONE = Form(
    number="1.0",
    send="SendMessage",
    stream="SendStreamingMessage",
    get="GetTask",
    role="ROLE_USER",
    kinds=False,
)
LEGACY = Form(
    number="0.3", send="message/send", stream="message/stream", get="tasks/get", role="user", kinds=True
)


class Version:
    """The form a run speaks to its agent, shared by all its conversations: named by the agent file
    or the card, or 1.0 tried first. While it is a guess, the ids of the requests sent on it are
    kept: an answer to one of them settles 1.0; a refusal of one of them (even one that arrives
    after another conversation's taught 0.3) settles 0.3 and has its turn sent again. Settled, it
    never changes."""

    def __init__(self) -> None:
        self.form = ONE
        self.settled = False
        self._guesses: set[str] = set()

    def named(self, number: Number) -> None:
        """The agent file or the card named the version ("": it did not)."""
        if number:
            self.form = ONE if number == "1.0" else LEGACY
            self.settled = True

    def sent(self, id: str) -> None:
        if not self.settled:
            self._guesses.add(id)

    def answered(self, id: object) -> None:
        """The request `id` was answered: 1.0 is settled when it was sent on the guess."""
        if self.guessed(id) and self.form is ONE:
            self.settled = True

    def refused(self, id: object) -> bool:
        """The request `id` was refused as a form the agent does not speak: whether it was sent in
        1.0 on the guess, so that 0.3 is (or already was) learned and it is to be sent again."""
        if not self.guessed(id) or (self.settled and self.form is ONE):
            return False
        self.form, self.settled = LEGACY, True
        return True

    def forget(self, id: object) -> None:
        """The request `id` failed otherwise: it settles nothing."""
        self.guessed(id)

    def guessed(self, id: object) -> bool:
        """Whether `id` was sent on the guess; it is let go."""
        if isinstance(id, str) and id in self._guesses:
            self._guesses.discard(id)
            return True
        return False


class A2a:
    """The A2A dialect of one agent (`spec`, its URL as errors show it `shown`), shared by the
    run's conversations: its Version is named by the agent file, or learned once."""

    def __init__(self, spec: AgentSpec, shown: str) -> None:
        self.spec = spec
        self.shown = shown
        self.version = Version()
        self.version.named(spec.speaks)
        self.masked = Masked(spec.secrets())

    async def ready(
        self, client: Callable[[], httpx.AsyncClient], headers: httpx.Headers, tokens: AccessToken | None
    ) -> str:
        """Read the agent card (with the agent's headers and bearer) for the version to speak; the
        build it names ("name version"), or "" when no card is served."""
        card = await CardRead(self.spec).card(client, headers, tokens)
        if not self.version.settled:
            self.version.named(card.number)
        return card.build

    def body(self, ask: Ask) -> object:
        id = MESSAGE_IDS.fresh()
        self.version.sent(id)
        return self.version.form.request(id, ask.message, ask.carry, self.spec.stream == "sse")

    def headers(self) -> Mapping[str, str]:
        return self.version.form.headers()

    def read(self, data: object) -> AgentReply:
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            self.refuse(data, resend=True)
        if not isinstance(data, dict) or "result" not in data:
            raise AgentFailure("bad_answer", f"the answer from {self.shown} is not a JSON-RPC response")
        self.version.answered(data.get("id"))
        text = TaskText(self.shown, self.masked)
        text.take(data["result"])
        if not text.seen:
            raise AgentFailure("bad_answer", f"the answer from {self.shown} is not an A2A message or task")
        text.counted(self.spec.tokens.usage(data))
        return self.done(text)

    def done(self, text: TaskText) -> AgentReply:
        """The answer `text` holds; Pending (the request that asks after its task) while it is a
        task still at work."""
        state, task = text.unfinished
        if task:
            raise Pending(self.version.form.poll(task), state)
        return text.reply()

    def turned_down(self, failure: AgentFailure, body: object) -> None:
        """A turn (`body`) refused with an HTTP error: Resend when it was sent in 1.0 on the guess
        and the agent's words, with HTTP 400, name the method (agno's 0.3-only server answers
        `SendMessage` so), teaching 0.3 once as -32601 does; else it settles nothing."""
        if not isinstance(body, dict):
            return
        method = body.get("method")
        names = {ONE.send: (ONE.send, LEGACY.send), ONE.stream: (ONE.stream, LEGACY.stream)}
        named = isinstance(method, str) and any(name in failure.message for name in names.get(method, ()))
        if failure.status == 400 and named and self.version.refused(body.get("id")):
            raise Resend
        self.version.forget(body.get("id"))

    def fold(self) -> Fold:
        return Streamed(self, TaskText(self.shown, self.masked))

    def refuse(self, data: dict[str, object], resend: bool) -> NoReturn:
        """A JSON-RPC error answer: Resend when it refused a turn sent in 1.0 on the guess (and
        `resend`: nothing of the answer came yet), else AgentFailure("a2a_error") quoting its code
        and message."""
        error = data.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        if code in REFUSED and resend and self.version.refused(data.get("id")):
            raise Resend
        self.version.forget(data.get("id"))
        said = ErrorBody(msgspec.json.encode(data), self.masked).message()
        coded = isinstance(code, int) and not isinstance(code, bool)
        number = f"JSON-RPC error {code}" if coded else "JSON-RPC error"
        raise AgentFailure(
            "a2a_error",
            f"{self.shown} answered {number}" + (f": {said}" if said else ""),
            message=f"{said} ({number})" if said else number,
        )


class Streamed:
    """A streamed A2A answer folded: each event's data is a JSON-RPC response whose result is a
    Message, a Task, a status update or an artifact update; an event with an error fails it."""

    def __init__(self, dialect: A2a, text: TaskText) -> None:
        self._dialect = dialect
        self._text = text
        self._started = False

    def add(self, event: Event) -> str:
        data = event.data
        if not isinstance(data, dict):
            return ""
        if isinstance(data.get("error"), dict):
            self._dialect.refuse(data, resend=not self._started)
        if "result" not in data:
            return ""
        if not self._started:
            self._started = True
            self._dialect.version.answered(data.get("id"))
        self._text.counted(self._dialect.spec.tokens.usage(data))
        return self._text.take(data["result"])

    def reply(self) -> AgentReply:
        return self._dialect.done(self._text)
