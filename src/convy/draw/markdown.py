"""A comparison and the gate's decision as the pull request's sticky comment (also the job summary
and comment.md), laid out for a phone (see docs/gate.md).

Its hidden marker line; the verdict and the rule that decided, said once; what needs attention — the
regressions with their failing claims and the judge's reasons, each linked to its place in
report.html, and whose fault the attempts that did not hold are, with the commonest message; the
headline numbers; then, collapsed, the scenarios lower within noise, every metric and every
scenario; the links line. A table shown open has at most 3 columns of short cells (glance.py), as
GitHub never wraps a table's cells on a phone; what does not fit is said on lines under it.

Only drawing: every number and decision comes from the Comparison and the GateDecision (see docs/gate.md).
What an agent or a model wrote — and scenario names and claims too — goes through Untrusted, so none
of it acts on GitHub. The body stays under GitHub's Limit: a table too long for it shows its first
rows and a `… N more` row, never a cut row. The figures are drawn in figures.py, the tables and
lists they are shown in are blocks.py's."""

from __future__ import annotations

import re

import msgspec

from convy.compare.comparison import Comparison
from convy.compare.gate import GateDecision
from convy.data import Data
from convy.draw.blocks import Limit, Listed, MarkdownCells
from convy.draw.figures import Figures
from convy.draw.glance import Causes, Keyed
from convy.draw.judgeline import JudgeLine
from convy.draw.links import Links
from convy.draw.notes import RunNotes
from convy.words import Plural, Sentence

VERDICTS: dict[str, str] = {"pass": "✅", "fail": "❌", "inconclusive": "⚠️"}

UNSAFE_NAME = re.compile(r"[^\w.-]+")
DASHES = re.compile(r"-{2,}")
FIRST = 5
"""The most scenarios a failing comment names before its first collapsed section."""


class Marker(Data, frozen=True, kw_only=True):
    """The comment's hidden first line, `<!-- convy-action:<agent> -->` (or, with a comment key,
    `<!-- convy-action:<agent>:<key> -->`), by which the action finds the comment again: the agent
    and the key made safe for an HTML comment — letters, digits, `_`, `.` and single `-` only (any
    other run of characters becomes `_`), at most 100 characters each."""

    agent: str
    key: str = ""

    def text(self) -> str:
        name = self.safe(self.agent) or "_"
        keyed = f":{self.safe(self.key)}" if self.key else ""
        return f"<!-- convy-action:{name}{keyed} -->"

    def safe(self, text: str) -> str:
        return DASHES.sub("-", UNSAFE_NAME.sub("_", text))[:100]


class CommentMarkdown(msgspec.Struct, frozen=True):
    """The comment on the pull request: under `limit` characters (GitHub's 65,536 by default)."""

    comparison: Comparison
    decision: GateDecision
    links: Links = Links()
    limit: int = 65_536

    def __post_init__(self) -> None:
        if self.limit < 16_384:
            raise ValueError("a comment needs a limit of 16,384 characters or more")

    def text(self) -> str:
        figures = Figures(self.comparison, self.decision, MarkdownCells(), self.links)
        limit = Limit(characters=self.limit)
        attention = FirstFive(figures.items(figures.attention()), len(self.comparison.scenarios)).listed()
        lower = figures.items(self.decision.within_noise(self.comparison))
        everything = figures.scenarios("github")
        empty = self.assembled(figures, attention, lower, "", "", "")
        room = self.limit - 1 - limit.size(empty)
        rest = limit.size(everything.text(0)) + limit.size(lower.text(0))
        shown = attention.within(room - rest, limit)
        room -= limit.size(shown)
        noise = lower.within(room - limit.size(everything.text(0)), limit)
        room -= limit.size(noise)
        return self.assembled(figures, attention, lower, shown, noise, everything.within(room, limit))

    def assembled(
        self, figures: Figures, attention: Listed, lower: Listed, shown: str, noise: str, everything: str
    ) -> str:
        """The comment with the lists and the table of all scenarios as given."""
        comparison = self.comparison
        verdict = self.decision.verdict
        heading, none = figures.troubles_heading(len(figures.attention()))
        parts = [
            Marker(agent=comparison.now.agent).text(),
            f"## {VERDICTS[verdict]} convy: {verdict} · {figures.agent()}",
            JudgeLine(comparison.now.calibration, wanted=self.decision.labels_wanted).text(),
            Sentence(f"**Decided by `{self.decision.rule}`:** {figures.explanation()}").text(),
            *(
                Sentence(f"⚠️ {note[0].upper()}{note[1:]}").text()
                for note in RunNotes(comparison, figures.cells).notes()
            ),
        ]
        if attention.items or self.decision.on_drop or verdict != "pass":
            parts += [f"### {heading}", shown if attention.items else none]
        if comparison.now.parties:
            parts += ["### Why attempts did not hold", Causes(figures).text()]
        if comparison.attacks():
            parts += ["### Attacks", figures.attacked(), figures.attacks("github").text()]
        parts += [
            f"**Pass rate {comparison.now.rate.text()}** {figures.change()}.",
            *filter(None, [JudgeLine(comparison.now.calibration, comparison.now.corrected).rate()]),
            Keyed(figures).text(),
        ]
        if lower.items:
            parts += [
                f"<details><summary>Lower than the baseline, {self.noise()} ({len(lower.items)})</summary>",
                noise,
                "</details>",
            ]
        parts += [
            "<details><summary>All metrics</summary>",
            figures.metrics("github").text(),
            "</details>",
            f"<details><summary>All {Plural(len(comparison.scenarios), 'scenario').text()}</summary>",
            everything,
            "</details>",
            self.links.markdown(),
        ]
        return "\n\n".join(parts) + "\n"

    def noise(self) -> str:
        """What the lower scenarios are: within noise, or, under a significant pooled drop, each not
        significant on its own."""
        alone = self.decision.significant_drop(self.comparison)
        return "not significant on its own" if alone else "within noise"


class FirstFive(msgspec.Struct, frozen=True):
    """What failed, at most FIRST of it, then "and N more" pointing at the table of all scenarios."""

    failed: Listed
    scenarios: int

    def listed(self) -> Listed:
        items = self.failed.items
        if len(items) <= FIRST:
            return self.failed
        every = Plural(self.scenarios, "scenario").text()
        more = f"- and {len(items) - FIRST:,} more (every one is under “All {every}”)"
        return Listed(items=(*items[:FIRST], more), noun=self.failed.noun)
