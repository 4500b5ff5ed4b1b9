"""LangGraph's own server (`langgraph dev`, LangGraph Platform) as a preset protocol: a thread made
when a conversation opens (`POST /threads`) and deleted when it closes, each turn a run streamed
from `POST /threads/{id}/runs/stream` in the `messages-tuple` mode, and the build read from
`GET /info`.

Only the AI messages' text is the answer — never a tool message's, nor the user's message echoed;
the AI messages' tool calls (whole, or assembled from their chunks) are the steps, each with the
result its tool message gave."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import httpx
import msgspec

from convy.play.agent import AgentFailure, Answer, Call, Usage
from convy.play.errorbody import ErrorBody, Masked
from convy.play.wire.dialect import Ask, Fold
from convy.play.wire.oauth import AccessToken
from convy.play.wire.reading import AgentReply, JsonText
from convy.play.wire.served import Build, ServerInfo
from convy.play.wire.spec import AgentSpec, Endpoint, SessionSpec
from convy.play.wire.stream import Event

AI = frozenset({"ai", "AIMessageChunk", "AIMessage"})
TOOL = frozenset({"tool", "ToolMessage", "ToolMessageChunk"})


class LangGraph(msgspec.Struct, frozen=True):
    """The LangGraph server at the agent file's `url` (its base), running the graph `assistant`."""

    spec: AgentSpec
    shown: str

    def played(self) -> AgentSpec:
        """The agent as its turns are sent: the runs URL, the thread as its session, streamed."""
        base = self.spec.url.rstrip("/")
        session = SessionSpec(
            start=Endpoint(
                url=f"{base}/threads", body={"metadata": {"convy": "$conversation"}}, id="thread_id"
            ),
            end=Endpoint(url=f"{base}/threads/$session", method="DELETE"),
        )
        url = f"{base}/threads/$session/runs/stream"
        return msgspec.structs.replace(self.spec, url=url, session=session, stream="sse")

    async def ready(
        self, client: Callable[[], httpx.AsyncClient], headers: httpx.Headers, tokens: AccessToken | None
    ) -> str:
        """The build `/info` names: `langgraph-api <version> (langgraph <version>)`, or ""."""
        data = await ServerInfo(self.spec, "/info").data(client, headers, tokens)
        if not isinstance(data, dict) or not isinstance(data.get("version"), str):
            return ""
        graph = data.get("langgraph_py_version")
        inner = f"(langgraph {graph})" if isinstance(graph, str) and graph else ""
        return Build(("langgraph-api", data["version"], inner)).text()

    def turned_down(self, failure: AgentFailure, body: object) -> None:
        """A framework server's refusal teaches nothing."""
        return None

    def body(self, ask: Ask) -> object:
        message = {"role": "user", "content": ask.message}
        if ask.ids:
            message["id"] = ask.ids[-1]
        return {
            "assistant_id": self.spec.assistant,
            "input": {"messages": [message]},
            "stream_mode": ["messages-tuple"],
            "on_disconnect": "cancel",
        }

    def headers(self) -> Mapping[str, str]:
        return {}

    def read(self, data: object) -> AgentReply:
        raise AgentFailure("bad_answer", f"{self.shown} answered JSON where a LangGraph run stream was asked")

    def fold(self) -> Fold:
        return RunMessages(self.shown)


class RunMessages:
    """A `messages-tuple` stream folded: each `messages` event's data is `[message, metadata]`. The
    text of AI messages appended (a whole message whose chunks came already is not added again);
    tool calls by their id, with the result of the tool message that answers them; the usage of
    the AI messages added up; an `error` event breaks the stream (stream_broken)."""

    def __init__(self, shown: str) -> None:
        self._shown = shown
        self._parts: list[str] = []
        self._chunked: set[str] = set()
        self._calls: dict[str, Call] = {}
        self._pieces: dict[tuple[str, int], Piece] = {}
        self._results: dict[str, str] = {}
        self._usage = Usage()

    def add(self, event: Event) -> str:
        if event.named("error"):
            said = ErrorBody(msgspec.json.encode(event.data), Masked(())).message()
            raise AgentFailure(
                "stream_broken", f"the run at {self._shown} failed: {said or 'no reason given'}", message=said
            )
        data = event.data
        if not event.named("messages") and not event.name.startswith("messages|"):
            return ""
        message = data[0] if isinstance(data, list) and data else None
        if not isinstance(message, dict):
            return ""
        kind, id = message.get("type"), str(message.get("id") or "")
        if kind in TOOL:
            self._results[str(message.get("tool_call_id") or "")] = MessageText(message.get("content")).text()
            return ""
        if kind not in AI:
            return ""
        self.counted(message.get("usage_metadata"))
        chunk = kind == "AIMessageChunk"
        if chunk:
            self.pieces(id, message.get("tool_call_chunks"))
        else:
            self.whole(message.get("tool_calls"))
        if not chunk and id in self._chunked:
            return ""
        if chunk and id:
            self._chunked.add(id)
        text = MessageText(message.get("content")).text()
        if text:
            self._parts.append(text)
        return text

    def whole(self, calls: object) -> None:
        for call in calls if isinstance(calls, list) else ():
            if isinstance(call, dict) and isinstance(call.get("name"), str):
                key = str(call.get("id") or len(self._calls))
                self._calls[key] = Call(name=call["name"], arguments=JsonText(call.get("args")).text)

    def pieces(self, id: str, chunks: object) -> None:
        """Tool-call chunks of the message `id`, assembled by their index."""
        for piece in chunks if isinstance(chunks, list) else ():
            if not isinstance(piece, dict):
                continue
            index = piece.get("index")
            self._pieces.setdefault((id, index if isinstance(index, int) else 0), Piece()).take(piece)

    def counted(self, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        counts = [usage.get(key) for key in ("input_tokens", "output_tokens")]
        if all(isinstance(count, int) and not isinstance(count, bool) for count in counts):
            self._usage = Usage(
                input=(self._usage.input or 0) + int(str(counts[0])),
                output=(self._usage.output or 0) + int(str(counts[1])),
            )

    def reply(self) -> AgentReply:
        calls = dict(self._calls)
        for (message, index), piece in self._pieces.items():
            calls.setdefault(
                piece.id or f"{message}:{index}", Call(name=piece.name, arguments=piece.arguments)
            )
        steps = tuple(
            msgspec.structs.replace(call, result=self._results.get(key, "")) for key, call in calls.items()
        )
        usage = self._usage if self._usage.input is not None else None
        return AgentReply(answer=Answer(text="".join(self._parts), usage=usage, steps=steps))


class Piece:
    """A tool call assembled from the `tool_call_chunks` of an AI message's chunks."""

    def __init__(self) -> None:
        self.name = ""
        self.arguments = ""
        self.id = ""

    def take(self, chunk: dict[str, object]) -> None:
        name, arguments, id = chunk.get("name"), chunk.get("args"), chunk.get("id")
        self.name += name if isinstance(name, str) else ""
        self.arguments += arguments if isinstance(arguments, str) else ""
        self.id = id if isinstance(id, str) and id else self.id


class MessageText(msgspec.Struct, frozen=True):
    """A LangChain message's content: a string, or a list of blocks whose `text` blocks count."""

    content: object

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        if not isinstance(self.content, list):
            return ""
        return "".join(
            block if isinstance(block, str) else str(block.get("text") or "")
            for block in self.content
            if isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text")
        )
