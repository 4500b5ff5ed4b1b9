"""Side by side: why a scenario changed, on comparison.html (decision 32) — for each scenario whose
status is in anchor.SIDE_BY_SIDE, one baseline attempt beside one attempt of this run, aligned turn
by turn, the first turn whose agent answers differ marked, the words that changed marked inside
differing answers (worddiff.py), each side's decision under it.

The pair: for a drop, the baseline's attempt that held beside one of this run that did not; for a
rise the reverse — each the lowest index that qualifies, chosen while the two runs' attempts stream
past (Picks), so only one attempt per scenario and side is ever held. Where none qualifies, the
closest is shown and the block says so. A `rejudged` scenario's baseline attempts are those the
comparison used: the baseline's transcripts as this run judged them again.

The block is a `<details>` with the id `diff-<anchor>` (anchor.Anchor.diff), opened by `:target`
with scripts blocked, as the report's windows are; its two columns stack at 400 px (pages/diff.css)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction

import msgspec
from markdown_it import MarkdownIt

from convy.compare.comparison import Comparison, NoBaseline, ScenarioChange
from convy.data import Data
from convy.draw.anchor import SIDE_BY_SIDE, Anchor
from convy.draw.links import TraceLink
from convy.draw.markup import FactList, Html, Pill, Tag
from convy.draw.transcript import AgentMarkdown, AttemptView, ClaimView, ShownAttempt, TurnView
from convy.draw.window import AttemptHtml, MarkdownHtml
from convy.draw.worddiff import MARKS, WordDiff
from convy.play.outcome import Failed, Outcome, Verdict
from convy.words import Plural


class Pick:
    """The attempt of one scenario shown on one side, chosen while attempts stream past: one that
    held when `wanted` is to hold, else one judged that did not hold (failed claims before the agent
    failing); the lowest index; else the closest (for a side that should not hold: an attempt
    without verdict before one that held)."""

    def __init__(self, wanted: bool) -> None:
        self.wanted = wanted
        self.best: Outcome | None = None

    def rank(self, outcome: Outcome) -> int:
        """How close an attempt is to the one wanted: 0 the closest. For a side that should not
        hold, one whose claims failed before one the agent failed (both qualify)."""
        match outcome.decision:
            case Verdict(holds=True):
                return 0 if self.wanted else 3
            case Verdict():
                return 1 if self.wanted else 0
            case Failed():
                return 1
            case _:
                return 1 if self.wanted else 2

    def add(self, outcome: Outcome) -> None:
        best = self.best
        if best is None or (self.rank(outcome), outcome.index) < (self.rank(best), best.index):
            self.best = outcome

    def fits(self) -> bool:
        """Whether the attempt kept is one the pair asks for."""
        return self.best is not None and self.rank(self.best) <= (0 if self.wanted else 1)


class Pair(Data, frozen=True, kw_only=True):
    """A scenario's change with the baseline attempt (`before`) and this run's (`after`) it is
    shown by; `notes` say where no attempt qualified."""

    change: ScenarioChange
    before: Outcome | None
    after: Outcome | None
    notes: tuple[str, ...] = ()


class ChangedPairs(msgspec.Struct, frozen=True):
    """The pairs of a comparison's scenarios that changed, in the comparison's order: `now` and
    `baseline` are the two runs' attempts (the baseline's as the comparison used them), each
    streamed once."""

    comparison: Comparison
    now: Iterable[Outcome]
    baseline: Iterable[Outcome]

    def pairs(self) -> tuple[Pair, ...]:
        if isinstance(self.comparison.baseline, NoBaseline):
            return ()
        changes = tuple(s for s in self.comparison.ordered() if s.status in SIDE_BY_SIDE)
        falling = {s.name: self.falling(s) for s in changes}
        before = {name: Pick(wanted=fall) for name, fall in falling.items()}
        after = {name: Pick(wanted=not fall) for name, fall in falling.items()}
        for picks, outcomes in ((after, self.now), (before, self.baseline)):
            for outcome in outcomes:
                pick = picks.get(outcome.scenario)
                if pick is not None:
                    pick.add(outcome)
        return tuple(self.pair(s, before[s.name], after[s.name]) for s in changes)

    def falling(self, s: ScenarioChange) -> bool:
        """Whether the scenario dropped: by its status, or, re-judged, by its shares (a drop when
        they are equal or unknown)."""
        if s.status in ("improved", "higher"):
            return False
        if s.status == "rejudged" and s.now.judged and s.baseline.judged:
            return Fraction(s.now.held, s.now.judged) <= Fraction(s.baseline.held, s.baseline.judged)
        return True

    def pair(self, s: ScenarioChange, before: Pick, after: Pick) -> Pair:
        notes: list[str] = []
        for pick, side in ((before, "the baseline"), (after, "this run")):
            if pick.best is None:
                notes.append(f"{side[0].upper()}{side[1:]} has no attempt of this scenario.")
            elif not pick.fits() and pick.wanted:
                notes.append(f"No attempt of {side} held: the closest is shown.")
            elif not pick.fits():
                notes.append(f"Every judged attempt of {side} held: the closest is shown.")
        return Pair(change=s, before=before.best, after=after.best, notes=tuple(notes))


class SideBySide(msgspec.Struct, frozen=True):
    """A pair drawn: its block, `diff-<anchor>`; `runs` names the baseline's run and this one."""

    pair: Pair
    runs: tuple[str, str]
    markdown: AgentMarkdown
    tone: str
    """The colour of the scenario's status."""
    trace: TraceLink = TraceLink()
    """Each attempt's link to its trace (trace-url)."""

    def html(self) -> Html:
        p = self.pair
        s = p.change
        views = tuple(
            ShownAttempt(o, self.markdown, self.trace.of(o)).view() if o else None
            for o in (p.before, p.after)
        )
        before, after = views
        summary = Tag("summary").of(
            Tag("span", {"class": "name"}).of(s.name),
            Pill(text=s.status, tone=self.tone).html(),
            Tag("span", {"class": "count"}).of(
                self.told(before, "before") + " · " + self.told(after, "after")
            ),
        )
        facts = (
            f"now {s.now.held} of {s.now.judged} judged held",
            f"baseline {s.baseline.held} of {s.baseline.judged}",
            s.p.text(),
            *(("the baseline's attempts judged again as this run's were",) if s.status == "rejudged" else ()),
        )
        inside: list[str | Html] = [FactList(facts=facts).html()]
        inside.extend(Tag("p", {"class": "notice"}).of(note) for note in p.notes)
        inside.append(Tag("div", {"class": "sides"}).of(*self.rows(before, after)))
        return Tag("details", {"class": f"diff tone-{self.tone}", "id": Anchor(s.name).diff()}).of(
            summary, Tag("div", {"class": "diff-body"}).of(*inside)
        )

    def told(self, view: AttemptView | None, side: str) -> str:
        who = "baseline" if side == "before" else "this run's"
        if view is None:
            return f"no {who} attempt"
        return f"{who} {view.title.lower()}: {view.outcome}"

    def rows(self, before: AttemptView | None, after: AttemptView | None) -> list[Html]:
        old = before.turns if before else ()
        new = after.turns if after else ()
        olds = tuple(t.agent for t in (self.pair.before.turns if self.pair.before else ()))
        news = tuple(t.agent for t in (self.pair.after.turns if self.pair.after else ()))
        count = max(len(old), len(new))
        first = next((i for i in range(count) if self.said(olds, i) != self.said(news, i)), None)
        rows = [self.row(self.head(before, "before"), self.head(after, "after"), "heads")]
        for i in range(count):
            differs = self.said(olds, i) != self.said(news, i)
            label: list[str | Html] = [f"Turn {i + 1}"]
            if i == first:
                label.append(Tag("span", {"class": "pill tone-warn first"}).of("first difference"))
            elif differs:
                label.append(Tag("span", {"class": "pill tone-plain"}).of("differs"))
            one, two = (old[i] if i < len(old) else None), (new[i] if i < len(new) else None)
            marked: tuple[list[object], list[object]] | None = None
            if differs and one is not None and two is not None:
                marked = WordDiff(one.agent, two.agent).marked()
            kind = "turn-pair" + (" differs" if differs else "") + (" first-difference" if i == first else "")
            rows.append(
                Tag("div", {"class": kind, "data-turn": i + 1}).of(
                    Tag("div", {"class": "turn-head"}).of(*label),
                    self.turn(before, one, i, "before", marked[0] if marked else None),
                    self.turn(after, two, i, "after", marked[1] if marked else None),
                )
            )
        if not count:
            rows.append(Tag("p", {"class": "quiet"}).of("No turn was played on either side."))
        rows.append(self.row(self.decision(before, "before"), self.decision(after, "after"), "decisions"))
        return rows

    def said(self, answers: tuple[str, ...], index: int) -> str | None:
        return answers[index] if index < len(answers) else None

    def row(self, one: Html, two: Html, kind: str) -> Html:
        return Tag("div", {"class": f"turn-pair {kind}"}).of(one, two)

    def side(self, side: str) -> Html:
        name = "baseline" if side == "before" else "this run"
        return Tag("span", {"class": "side-tag"}).of(name)

    def head(self, view: AttemptView | None, side: str) -> Html:
        run = self.runs[0] if side == "before" else self.runs[1]
        title = "Baseline" if side == "before" else "This run"
        if view is None:
            return Tag("div", {"class": f"cell head {side}"}).of(
                Tag("div", {"class": "who-run"}).of(
                    Tag("span", {"class": "side-name"}).of(title), f" · run {run}"
                ),
                Tag("p", {"class": "quiet"}).of("No attempt recorded."),
            )
        return Tag("div", {"class": f"cell head {side}"}).of(
            Tag("div", {"class": "who-run"}).of(
                Tag("span", {"class": "side-name"}).of(title), f" · run {run}"
            ),
            Tag("span", {"class": "title"}).of(view.title),
            " ",
            Pill(text=view.outcome, tone=view.tone).html(),
            FactList(facts=view.facts[:2], kind="small").html(),
            *self.traced(view),
        )

    def traced(self, view: AttemptView) -> tuple[Html, ...]:
        """The attempt's link to its trace, when trace-url gives one."""
        if not view.trace:
            return ()
        link = Tag("a", {"href": view.trace, "rel": "noopener noreferrer"}).of("trace")
        return (Tag("p", {"class": "trace"}).of(link),)

    def turn(
        self, view: AttemptView | None, t: TurnView | None, index: int, side: str, marked: list[object] | None
    ) -> Html:
        if view is None or t is None:
            return Tag("div", {"class": f"cell {side} missing"}).of(
                self.side(side), Tag("p", {"class": "quiet"}).of(f"no turn {index + 1}")
            )
        answer = MarkdownHtml(marked if marked is not None else t.agent, MARKS).children()
        parts: list[str | Html] = [
            self.side(side),
            Tag("div", {"class": "message user"}).of(
                Tag("div", {"class": "who"}).of("user"), Tag("div", {"class": "said"}).of(t.user)
            ),
        ]
        if t.steps:
            drawn = AttemptHtml(view)
            parts.append(Tag("div", {"class": "steps"}).of(*(drawn.step(s) for s in t.steps)))
        parts.append(
            Tag("div", {"class": "message agent"}).of(
                Tag("div", {"class": "who"}).of("agent"), Tag("div", {"class": "said markdown"}).of(*answer)
            )
        )
        return Tag("div", {"class": f"cell {side}"}).of(*parts)

    def decision(self, view: AttemptView | None, side: str) -> Html:
        if view is None:
            return Tag("div", {"class": f"cell decision {side}"}).of(self.side(side))
        parts: list[str | Html] = [
            self.side(side),
            Tag("h4").of("Decision"),
            Pill(text=view.outcome, tone=view.tone).html(),
        ]
        if view.detail:
            parts.append(Tag("pre", {"class": "detail"}).of(view.detail))
        failing = tuple(c for c in view.claims if c.tone == "bad")
        if failing:
            parts.append(Tag("ul", {"class": "failing-claims"}).of(*(self.claim(c) for c in failing)))
        elif view.claims:
            passed = Plural(len(view.claims), "claim or check", "claims and checks").text()
            parts.append(Tag("p", {"class": "quiet"}).of(f"{passed} passed"))
        return Tag("div", {"class": f"cell decision {side}"}).of(*parts)

    def claim(self, c: ClaimView) -> Html:
        return Tag("li").of(
            Tag("div", {"class": "claim"}).of(c.claim),
            Tag("div", {"class": "reason"}).of(Tag("span", {"class": "by"}).of(f"{c.by}:"), " ", c.reason),
        )


class Differences(msgspec.Struct, frozen=True):
    """The section of comparison.html with a side-by-side block per scenario that changed: `now` and
    `baseline` are the two runs' attempts (the baseline's as the comparison used them)."""

    comparison: Comparison
    now: Iterable[Outcome]
    baseline: Iterable[Outcome]
    tones: Mapping[str, str]
    """The colour of each status."""
    trace: TraceLink = TraceLink()
    """Each attempt's link to its trace (trace-url)."""

    def html(self) -> Html | None:
        """The section, or None when no scenario changed (or there is no baseline)."""
        c = self.comparison
        if isinstance(c.baseline, NoBaseline):
            return None
        pairs = ChangedPairs(c, self.now, self.baseline).pairs()
        if not pairs:
            return None
        markdown = AgentMarkdown(MarkdownIt("commonmark", {"html": False}))
        runs = (c.baseline.run, c.now.run)
        return Tag("section", {"class": "differences", "aria-label": "why it changed"}).of(
            Tag("h2").of("Why it changed"),
            Tag("p", {"class": "quiet"}).of(
                "For each scenario that changed, a baseline attempt beside one of this run — for a "
                "drop one that held beside one that did not, for a rise the reverse — turn by turn; "
                "the first turn whose answers differ is marked, and inside differing answers the "
                "words removed and added."
            ),
            *(SideBySide(p, runs, markdown, self.tones[p.change.status], self.trace).html() for p in pairs),
        )
