"""One attempt as a scenario's window shows it, made from its Outcome: its turns, the agent's steps
and each claim's (or check's) decision; an agent's Markdown as a tree of tag names and text; a text
cut to what a page keeps of it; and which attempts of a scenario the window shows.

An agent's text never becomes HTML here: AgentMarkdown gives nested lists such as
`["p", "Hello ", ["strong", "there"]]`, which window.py draws as elements of the tag names it
allows, every string escaped. See page.py for the whole of the page's safety."""

from __future__ import annotations

import re
from typing import Literal

import msgspec
from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

from convy.data import Data
from convy.draw.amount import Amount
from convy.draw.page import Tone
from convy.draw.shown import ShownTokens
from convy.play.agent import Call, Thought
from convy.play.outcome import Failed, NoVerdict, Outcome, Verdict

LIMIT = 20_000
"""The most characters of one text (a message, a step, a reason) a page keeps."""

PLAIN = re.compile(r"[A-Za-z\"'(][^\n\r\\`*_\[\]<>!&#~|]*")
"""Text Markdown leaves as it is: one line without a character that could start markup, which
begins with a letter, a quote or a parenthesis (so it opens no list, heading, quote or code)."""

BLOCKS = {
    "paragraph": "p",
    "bullet_list": "ul",
    "ordered_list": "ol",
    "list_item": "li",
    "blockquote": "blockquote",
    "em": "em",
    "strong": "strong",
}
"""Markdown's nodes that become an element of the same meaning, by the tag name the script allows."""


class PageText(msgspec.Struct, frozen=True, kw_only=True):
    """A text as a page keeps it: at most `limit` characters, and a note when it was cut."""

    text: str
    limit: int = LIMIT

    def kept(self) -> str:
        return self.text[: self.limit]

    def note(self) -> str:
        if len(self.text) <= self.limit:
            return ""
        return f"[cut: the first {self.limit:,} of {len(self.text):,} characters are shown]"

    def whole(self) -> str:
        """The kept text with the note after it."""
        note = self.note()
        return f"{self.kept()}\n{note}" if note else self.text


class AgentMarkdown(msgspec.Struct, frozen=True):
    """An agent's Markdown as a tree for the page: a node is a string (text) or a list of a tag name
    and its children. `parser` is CommonMark with raw HTML off, so HTML an agent wrote is
    text; a link is its text and its address in code, an image its description and address in code."""

    parser: MarkdownIt

    def nodes(self, text: str) -> list[object]:
        if not text.strip():
            return []
        if PLAIN.fullmatch(text.strip()):
            return [["p", text.strip()]]
        return self.children(SyntaxTreeNode(self.parser.parse(text)))

    def children(self, node: SyntaxTreeNode) -> list[object]:
        found: list[object] = []
        for child in node.children:
            found.extend(self.node(child))
        return found

    def node(self, node: SyntaxTreeNode) -> list[object]:
        """The nodes one Markdown node becomes (a list, as a tight list's paragraph becomes its
        children alone)."""
        match node.type:
            case "text" | "html_inline" | "html_block":
                return [node.content]
            case "softbreak":
                return ["\n"]
            case "hardbreak":
                return [["br"]]
            case "hr":
                return [["hr"]]
            case "code_inline":
                return [["code", node.content]]
            case "code_block" | "fence":
                return [["pre", node.content.removesuffix("\n")]]
            case "heading":
                return [["h4", *self.children(node)]]
            case "paragraph" if node.hidden:
                return self.children(node)
            case "link":
                address = str(node.attrs.get("href", ""))
                said = self.children(node)
                if said == [address]:
                    return [["code", address]]
                return [["span", *said, " ", ["code", address]]]
            case "image":
                address = str(node.attrs.get("src", ""))
                return [["span", "[image: ", *self.children(node), "] ", ["code", address]]]
            case kind if kind in BLOCKS:
                return [[BLOCKS[kind], *self.children(node)]]
            case _:
                return self.children(node) if node.children else [node.content]


class StepView(Data, frozen=True, kw_only=True):
    """A step the agent reported: a tool call (its name, arguments and result) or a thought."""

    kind: Literal["call", "thought"]
    name: str
    text: str
    result: str = ""


class TurnView(Data, frozen=True, kw_only=True):
    """One turn: what the user said (text), the agent's steps, its answer (Markdown tree), figures."""

    user: str
    agent: list[object]
    steps: tuple[StepView, ...]
    facts: tuple[str, ...]


class ClaimView(Data, frozen=True, kw_only=True):
    """The decision on one claim, with its reason, and who decided: the judge, or a deterministic
    check of the scenario."""

    claim: str
    decision: str
    reason: str
    tone: Tone
    by: Literal["judge", "check"] = "judge"


class AttemptView(Data, frozen=True, kw_only=True):
    """One attempt in a scenario's window; `open` when it did not hold, so it is shown unfolded."""

    title: str
    outcome: str
    detail: str
    tone: Tone
    open: bool
    facts: tuple[str, ...]
    claims: tuple[ClaimView, ...]
    turns: tuple[TurnView, ...]
    trace: str = ""
    """The link to the attempt's trace in the team's tracing tool (trace-url); "" none."""


class ShownAttempt(msgspec.Struct, frozen=True):
    """An Outcome, to be shown in its scenario's window, with the link to its trace ("" none)."""

    outcome: Outcome
    markdown: AgentMarkdown
    trace: str = ""

    def view(self) -> AttemptView:
        outcome = self.outcome
        claims: tuple[ClaimView, ...] = ()
        tone: Tone
        match outcome.decision:
            case Verdict(holds=holds, claims=results):
                said, detail = ("held", "") if holds else ("did not hold", "")
                tone = "good" if holds else "bad"
                claims = tuple(
                    ClaimView(
                        claim=PageText(text=r.claim).whole(),
                        decision=("pass" if r.passed else "fail")
                        + (f" · {r.grade}" if r.grade else "")
                        + (f" · {r.split}" if r.split else ""),
                        reason=PageText(text=r.reason).whole(),
                        tone="good" if r.passed else "bad",
                        by="check" if r.checked else "judge",
                    )
                    for r in results
                )
            case Failed(reason=reason, detail=detail, status=status):
                said, tone = f"the agent failed: {reason}", "bad"
                detail = detail + (f" (HTTP {status})" if status and f"HTTP {status}" not in detail else "")
            case NoVerdict(reason=reason, detail=detail, status=status, raw=raw):
                said, tone = f"no verdict: {reason}", "warn"
                detail = detail + (f" (HTTP {status})" if status and f"HTTP {status}" not in detail else "")
                detail = detail + (f"\n\nThe judge's reply, as it came:\n{raw}" if raw else "")
        turns = len(outcome.turns)
        facts = [
            Amount(value=outcome.seconds, unit="s").text(),
            f"{turns} turn" if turns == 1 else f"{turns} turns",
        ]
        if outcome.ended:
            facts.append(f"ended: {outcome.ended}")
        if outcome.started:
            facts.append(f"started {outcome.started}")
        facts.append(f"user model tokens {ShownTokens(usage=outcome.user_usage).text()}")
        if outcome.reused is not None:
            source = outcome.reused
            facts.append(f"judge: reused (no judge call) from {source.run}, attempt {source.index + 1}")
        else:
            facts.append(f"judge tokens {ShownTokens(usage=outcome.judge_usage).text()}")
        return AttemptView(
            title=f"Attempt {outcome.index + 1}",
            outcome=said,
            detail=PageText(text=detail).whole(),
            tone=tone,
            open=tone != "good",
            facts=tuple(facts),
            claims=claims,
            turns=tuple(self.turn(index) for index in range(turns)),
            trace=self.trace,
        )

    def turn(self, index: int) -> TurnView:
        turn = self.outcome.turns[index]
        answer = PageText(text=turn.agent)
        agent = self.markdown.nodes(answer.kept())
        if answer.note():
            agent.append(["p", ["em", answer.note()]])
        steps: list[StepView] = []
        for step in turn.steps:
            match step:
                case Call(name=name, arguments=arguments, result=result):
                    steps.append(
                        StepView(
                            kind="call",
                            name=PageText(text=name, limit=200).whole(),
                            text=PageText(text=arguments).whole(),
                            result=PageText(text=result).whole(),
                        )
                    )
                case Thought(text=text):
                    steps.append(StepView(kind="thought", name="thought", text=PageText(text=text).whole()))
        facts = (
            f"turn {index + 1}",
            Amount(value=turn.seconds, unit="s").text(),
            *(
                (f"first token {Amount(value=turn.first, unit='s').text()}",)
                if turn.first is not None
                else ()
            ),
            f"agent tokens {ShownTokens(usage=turn.usage).text()}",
            *(("user replayed from the baseline",) if turn.replayed else ()),
        )
        return TurnView(user=PageText(text=turn.user).whole(), agent=agent, steps=tuple(steps), facts=facts)


SHOWN = 20
"""The most attempts a scenario's window shows."""


class Chosen:
    """The attempts of one scenario a report shows, chosen while they stream past: up to SHOWN that
    did not hold, then the first that held; never more than 2 × SHOWN held at once."""

    def __init__(self) -> None:
        self.unheld: list[Outcome] = []
        self.held: list[Outcome] = []

    def add(self, outcome: Outcome) -> None:
        match outcome.decision:
            case Verdict(holds=True):
                if len(self.held) < SHOWN:
                    self.held.append(outcome)
            case _:
                if len(self.unheld) < SHOWN:
                    self.unheld.append(outcome)

    def shown(self) -> list[Outcome]:
        kept = self.unheld + self.held[: SHOWN - len(self.unheld)]
        return sorted(kept, key=lambda outcome: outcome.index)
