"""Model calls gathered from every source, then put into conversations: by the id on the call's
span or its nearest ancestor, else by the history the call carries, else by its trace; in start
order, a call carrying the whole history adding only what is new, the system message never a turn.

A call's conversation is named by `gen_ai.conversation.id`, `session.id` or `langfuse.session.id`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from convy.draft.messages import EVENT_NAMES, Conventions, Pair
from convy.draft.recorded import ModelCall, Recorded, SpanLink, Utterance

SESSION_KEYS = ("gen_ai.conversation.id", "session.id", "langfuse.session.id")
"""The attributes that name a call's conversation, first found first."""

DEEPEST = 64
"""The most ancestors looked through for a conversation id (a loop in bad data ends there)."""


class Gathering:
    """What every source read so far holds: spans (their links), model calls by span, and calls
    that logs recorded; each message kept once however many calls repeat it (a history carried
    by every call costs its text once). `wanted`: the attributes `--where` asks about."""

    def __init__(self, wanted: Iterable[str] = ()) -> None:
        self.wanted = tuple(wanted)
        self._book: dict[Pair, Utterance] = {}
        self._links: dict[int, SpanLink] = {}
        self._calls: dict[int, ModelCall] = {}
        self._logged: dict[int, ModelCall] = {}
        self._loose: list[ModelCall] = []
        self._read = 0

    def spoken(self, pairs: Iterable[Pair]) -> tuple[Utterance, ...]:
        said = []
        for pair in pairs:
            known = self._book.get(pair)
            if known is None:
                known = self._book[pair] = Utterance(*pair)
            said.append(known)
        return tuple(said)

    def link(self, trace: str, span: str, parent: str, at: int, attributes: Mapping[str, object]) -> None:
        """A span read: its parent, its conversation id, its start and the attributes `--where`
        wants."""
        session = next((str(attributes[key]) for key in SESSION_KEYS if attributes.get(key)), "")
        kept = tuple((key, self.text(attributes[key])) for key in self.wanted if key in attributes)
        self._links[hash((trace, span))] = SpanLink(hash((trace, parent)) if parent else 0, session, at, kept)

    def text(self, value: object) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    def call(
        self,
        origin: str,
        trace: str,
        span: str,
        at: int,
        asked: list[Pair],
        answered: list[Pair],
        logged: bool = False,
    ) -> None:
        """A model call read, from a span's attributes or events, or (`logged`) from log records; a
        span's own messages win over its logs', so a call recorded both ways is read once."""
        if not asked and not answered:
            return
        self._read += 1
        made = ModelCall(
            origin=origin,
            trace=trace,
            span=span,
            at=at,
            order=self._read,
            asked=self.spoken(asked),
            answered=self.spoken(answered),
        )
        if not span:
            self._loose.append(made)
            return
        into = self._logged if logged else self._calls
        known = into.get(made.key)
        if known is not None and logged:
            made = ModelCall(
                origin=known.origin,
                trace=trace,
                span=span,
                at=min(known.at, at) if known.at and at else known.at or at,
                order=known.order,
                asked=known.asked + made.asked,
                answered=known.answered + made.answered,
            )
        into[made.key] = made

    def span(
        self,
        origin: str,
        trace: str,
        span: str,
        parent: str,
        at: int,
        attributes: Mapping[str, object],
        events: Sequence[tuple[str, Mapping[str, object]]],
    ) -> None:
        """A span read (plain attributes, dotted keys; its events as (name, attributes)): its link,
        its start, and its model call when it records one, by its attributes else its events."""
        self.link(trace, span, parent, at, attributes)
        conventions = Conventions()
        asked, answered = conventions.attributes(attributes)
        if not asked and not answered:
            asked, answered = conventions.events(
                [(name, body) for name, body in events if name in EVENT_NAMES]
            )
        self.call(origin, trace, span, at, asked, answered)

    def calls(self) -> list[ModelCall]:
        """Every call once, in start order (the order read for the same time)."""
        every = list(self._calls.values())
        for key, logged in self._logged.items():
            if key in self._calls:
                continue
            link = self._links.get(key)
            at = link.at if link is not None and link.at else logged.at
            every.append(
                ModelCall(
                    origin=logged.origin,
                    trace=logged.trace,
                    span=logged.span,
                    at=at,
                    order=logged.order,
                    asked=logged.asked,
                    answered=logged.answered,
                )
            )
        every += self._loose
        return sorted(every, key=lambda call: (call.at, call.order))

    def session(self, call: ModelCall) -> str:
        """The conversation id on the call's span or its nearest ancestor in the trace; "" none."""
        key = call.key
        for _ in range(DEEPEST):
            link = self._links.get(key)
            if link is None:
                return ""
            if link.session:
                return link.session
            if not link.parent:
                return ""
            key = link.parent
        return ""

    def kept(self, call: ModelCall) -> dict[str, str]:
        """The attributes `--where` wants on the call's span and its ancestors (the nearest wins)."""
        found: dict[str, str] = {}
        key = call.key
        for _ in range(DEEPEST):
            link = self._links.get(key)
            if link is None:
                break
            for name, value in link.kept:
                found.setdefault(name, value)
            if not link.parent:
                break
            key = link.parent
        return found

    def conversations(self) -> list[Recorded]:
        """The conversations of every call gathered, in the order each began."""
        threads: dict[tuple[str, str], Thread] = {}
        ends: dict[tuple[Utterance, ...], list[tuple[str, str]]] = {}
        for call in self.calls():
            session = self.session(call)
            if session:
                key = ("session", session)
            else:
                key = self.continued(call, ends) or ("trace", call.trace or f"call-{call.order}")
            thread = threads.get(key)
            if thread is None:
                thread = threads[key] = Thread(call, session)
            else:
                waiting = ends.get(thread.end, [])
                if key in waiting:
                    waiting.remove(key)
                    if not waiting:
                        del ends[thread.end]
            thread.add(call, self.kept(call))
            ends.setdefault(thread.end, []).append(key)
        return [thread.recorded(index) for index, thread in enumerate(threads.values())]

    def continued(
        self, call: ModelCall, ends: Mapping[tuple[Utterance, ...], list[tuple[str, str]]]
    ) -> tuple[str, str] | None:
        """The conversation whose last call's input and output begin this call's input (system
        messages aside: a system prompt that names the time changes with every call), the longest
        such first; None when none does."""
        said = call.said
        for length in range(len(said), 0, -1):
            waiting = ends.get(said[:length])
            if waiting:
                return waiting[0]
        return None


class Thread:
    """One conversation being put together: its messages so far (system ones left out), the last
    call's input and output (`end`), and what it will be written with."""

    def __init__(self, first: ModelCall, session: str) -> None:
        self.origin = first.origin
        self.trace = first.trace
        self.session = session
        self.latest = first.at
        self.messages: list[Utterance] = []
        self.end: tuple[Utterance, ...] = ()
        self.kept: dict[str, str] = {}

    def add(self, call: ModelCall, kept: Mapping[str, str]) -> None:
        """The call's new messages: those after what it shares with the last call's input and
        output, system messages aside (all of them when it carries no history)."""
        said = call.said
        shared = 0
        for mine, theirs in zip(said, self.end, strict=False):
            if mine != theirs:
                break
            shared += 1
        new = (*said[shared:], *call.answered)
        self.messages += [message for message in new if message.role != "system"]
        self.end = (*said, *(message for message in call.answered if message.role != "system"))
        self.latest = max(self.latest, call.at)
        for name, value in kept.items():
            self.kept.setdefault(name, value)

    def recorded(self, index: int) -> Recorded:
        return Recorded(
            origin=self.origin,
            trace=self.trace,
            session=self.session,
            index=index,
            latest=self.latest / 1e9,
            messages=tuple(self.messages),
            kept=dict(self.kept),
        )
