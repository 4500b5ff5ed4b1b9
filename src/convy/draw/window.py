"""Each scenario's window on a run's page: its records, made from a run's attempts as they stream
past, and how one is drawn as static HTML.

A window is a `<details>` whose id is the scenario's anchor, so `report.html#<anchor>` opens it by
`:target` with scripts blocked; each attempt in it shows how it ended, the decision on each claim
and check, and the transcript with the agent's steps. An agent's Markdown tree is drawn as elements
of the tag names allowed, every string escaped."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
from markdown_it import MarkdownIt

from convy.compare.parts import ScenarioSummary
from convy.compare.summary import Summary
from convy.draw.anchor import Anchor
from convy.draw.links import TraceLink
from convy.draw.markup import FactList, Html, Pill, Tag
from convy.draw.page import Tile, Window
from convy.draw.shown import Counted, Figure, Percent, ScenarioResult
from convy.draw.transcript import (
    AgentMarkdown,
    AttemptView,
    Chosen,
    PageText,
    ShownAttempt,
    StepView,
    TurnView,
)
from convy.play.outcome import Outcome
from convy.words import Plural

TAGS = frozenset(
    {"p", "ul", "ol", "li", "blockquote", "em", "strong", "code", "pre", "br", "hr", "h4", "span"}
)
"""The tag names an agent's Markdown may become; any other node becomes a span."""


class MarkdownHtml(msgspec.Struct, frozen=True):
    """An agent's Markdown tree (transcript.AgentMarkdown) as HTML children: elements only of TAGS
    and of `marks` (the side by side's `del`/`ins` around changed words, worddiff.py), every string a
    text."""

    nodes: list[object]
    marks: frozenset[str] = frozenset()

    def children(self) -> list[str | Html]:
        found: list[str | Html] = []
        for node in self.nodes:
            if isinstance(node, str):
                found.append(node)
            elif isinstance(node, list) and node and isinstance(node[0], str):
                name = node[0] if node[0] in TAGS or node[0] in self.marks else "span"
                inside = MarkdownHtml(node[1:], self.marks).children()
                if name == "pre":
                    found.append(Tag("pre").of(Tag("code").of(*inside)))
                else:
                    found.append(Tag(name).of(*inside))
        return found


class AttemptHtml(msgspec.Struct, frozen=True):
    """One attempt in its scenario's window: a `<details>`, open when the attempt did not hold."""

    view: AttemptView

    def html(self) -> Html:
        a = self.view
        summary = Tag("summary").of(
            Tag("span", {"class": "title"}).of(a.title),
            Pill(text=a.outcome, tone=a.tone).html(),
            FactList(facts=a.facts, kind="inline").html(),
        )
        body: list[str | Html] = []
        if a.trace:
            body.append(
                Tag("p", {"class": "trace"}).of(
                    Tag("a", {"href": a.trace, "rel": "noopener noreferrer"}).of("trace"),
                    " — this attempt in your tracing tool",
                )
            )
        if a.detail:
            body.append(Tag("pre", {"class": "detail"}).of(a.detail))
        if a.claims:
            body.append(self.claims())
        body.extend(self.turn(t) for t in a.turns)
        if not a.turns:
            body.append(Tag("p", {"class": "quiet"}).of("No turn was played."))
        return Tag("details", {"class": f"attempt tone-{a.tone}", "open": a.open}).of(
            summary, Tag("div", {"class": "body"}).of(*body)
        )

    def claims(self) -> Html:
        """The decision on each claim and check; a narrow screen shows each as a card."""
        names = ("Claim or check", "Decision", "Reason")
        head = Tag("thead").of(Tag("tr").of(*(Tag("th", {"scope": "col"}).of(n) for n in names)))
        rows = [
            Tag("tr").of(
                Tag("td", {"data-label": names[0]}).of(c.claim),
                Tag("td", {"data-label": names[1]}).of(Pill(text=c.decision, tone=c.tone).html()),
                Tag("td", {"data-label": names[2]}).of(
                    Tag("span").of(Tag("span", {"class": "by"}).of(f"{c.by}:"), " ", c.reason)
                ),
            )
            for c in self.view.claims
        ]
        return Tag("table", {"class": "claims cards"}).of(head, Tag("tbody").of(*rows))

    def step(self, s: StepView) -> Html:
        if s.kind == "call":
            parts: list[str | Html] = [
                Tag("div", {"class": "call"}).of(
                    Tag("span", {"class": "tag"}).of("tool"), Tag("code", {"class": "name"}).of(s.name)
                )
            ]
            if s.text:
                parts.append(Tag("pre", {"class": "arguments"}).of(s.text))
            if s.result:
                parts.append(
                    Tag("div", {"class": "result"}).of(
                        Tag("span", {"class": "tag"}).of("result"), Tag("pre").of(s.result)
                    )
                )
            return Tag("div", {"class": "step step-call"}).of(*parts)
        return Tag("div", {"class": "step step-thought"}).of(
            Tag("span", {"class": "tag"}).of(s.name), Tag("div", {"class": "thought"}).of(s.text)
        )

    def turn(self, t: TurnView) -> Html:
        parts: list[str | Html] = [
            Tag("div", {"class": "message user"}).of(
                Tag("div", {"class": "who"}).of("user"), Tag("div", {"class": "said"}).of(t.user)
            )
        ]
        if t.steps:
            parts.append(Tag("div", {"class": "steps"}).of(*(self.step(s) for s in t.steps)))
        parts.append(
            Tag("div", {"class": "message agent"}).of(
                Tag("div", {"class": "who"}).of("agent"),
                Tag("div", {"class": "said markdown"}).of(*MarkdownHtml(t.agent).children()),
            )
        )
        parts.append(FactList(facts=t.facts, kind="small").html())
        return Tag("div", {"class": "turn"}).of(*parts)


class WindowHtml(msgspec.Struct, frozen=True):
    """A scenario's window: a `<details>` with the scenario's anchor as id, its summary the name and
    the result; inside, its figures, failing claims and attempts."""

    window: Window

    def html(self) -> Html:
        w = self.window
        count = Plural(len(w.attempts), "attempt").text() if w.attempts else "no attempt"
        summary = Tag("summary").of(
            Tag("span", {"class": "name"}).of(w.title),
            Pill(text=w.result, tone=w.tone).html(),
            Tag("span", {"class": "count"}).of(count),
        )
        inside: list[str | Html] = [FactList(facts=w.facts).html()]
        if w.failing:
            inside.append(Tag("h3").of("Failing claims and checks"))
            inside.append(Tag("div", {"class": "failing"}).of(*(self.failing(f) for f in w.failing)))
        inside.append(Tag("h3").of("Attempts"))
        if not w.attempts:
            inside.append(Tag("p", {"class": "quiet"}).of("No attempt of this scenario was recorded."))
        inside.extend(w.attempts)
        return Tag("details", {"class": f"window tone-{w.tone}", "id": w.anchor}).of(
            summary, Tag("div", {"class": "window-body"}).of(*inside)
        )

    def failing(self, f: Tile) -> Html:
        return TileHtml(box="claim", label="text", value="count", note="reason").html(f)


class Windows(msgspec.Struct, frozen=True):
    """The scenarios' windows of one run's page: `summary` is the run summed up, `outcomes` its
    attempts, streamed once."""

    summary: Summary
    outcomes: Iterable[Outcome]
    trace: TraceLink = TraceLink()
    """Each attempt's link to its trace (trace-url)."""

    def windows(self) -> tuple[Window, ...]:
        """Each scenario's window with at most transcript.SHOWN attempts — those that did not hold
        first, then the first that held — so a page of a 10,000-attempt run stays light; every
        attempt is in attempts.jsonl and the tables."""
        scenarios = self.summary.scenarios
        places = {c.name: index for index, c in enumerate(scenarios)}
        chosen: list[Chosen] = [Chosen() for _ in scenarios]
        for outcome in self.outcomes:
            place = places.get(outcome.scenario)
            if place is not None:
                chosen[place].add(outcome)
        markdown = AgentMarkdown(MarkdownIt("commonmark", {"html": False}))
        return tuple(
            self.window(
                c,
                tuple(
                    AttemptHtml(ShownAttempt(o, markdown, self.trace.of(o)).view()).html()
                    for o in kept.shown()
                ),
            )
            for c, kept in zip(scenarios, chosen, strict=True)
        )

    def window(self, c: ScenarioSummary, attempts: tuple[Html, ...]) -> Window:
        where = f"{c.file}:{c.line}" if c.file else "declared in no file"
        facts: tuple[str, ...] = (
            f"pass rate {Percent(number=c.rate).text()}",
            Counted(tally=c.tally).text(),
            f"pass^{self.summary.repeat} {Percent(number=c.pass_k).value()}",
            f"{c.failed} failed · {c.no_verdict} without verdict",
            f"attempt time {Figure(spread=c.seconds, unit='s').line()}",
            where,
        )
        if len(attempts) < c.attempts:
            facts = (
                *facts,
                f"showing {len(attempts)} of {Plural(c.attempts, 'attempt').text()}, those "
                "that did not hold first; "
                "every attempt is in attempts.jsonl",
            )
        failing = tuple(
            Tile(
                label=PageText(text=f.claim).whole(),
                value=f"failed in {f.failed} of {f.judged} judged {Plural(f.judged, 'attempt').word}",
                note=f"{'check' if f.check else 'judge'}: {PageText(text=f.reason).whole()}"
                if f.reason
                else "",
                tone="bad",
            )
            for f in c.failing
        )
        result = ScenarioResult(tally=c.tally)
        return Window(
            title=c.name,
            anchor=Anchor(c.name).id(),
            result=result.label(),
            tone=result.tone(),
            facts=facts,
            failing=failing,
            attempts=attempts,
        )


class TileHtml(msgspec.Struct, frozen=True, kw_only=True):
    """A Tile as HTML: a box coloured by its tone holding its label, its value and, when it has one,
    its note, each a div of the class named here."""

    box: str
    label: str
    value: str
    note: str

    def html(self, tile: Tile) -> Html:
        parts: list[str | Html] = [
            Tag("div", {"class": self.label}).of(tile.label),
            Tag("div", {"class": self.value}).of(tile.value),
        ]
        if tile.note:
            parts.append(Tag("div", {"class": self.note}).of(tile.note))
        return Tag("div", {"class": f"{self.box} tone-{tile.tone}"}).of(*parts)
