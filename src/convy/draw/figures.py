"""Every figure and list the comment and the console show, drawn from the comparison and the gate's
decision: the headline, the key metrics, whose fault the attempts that did not hold are, the
regressions with their failing claims and the scenarios, each as a table or a list that keeps to
its room; the notes on how the run was made are in notes.py."""

from __future__ import annotations

import msgspec

from convy.compare.comparison import Comparison, Delta, NoBaseline, ScenarioChange
from convy.compare.gate import GateDecision
from convy.compare.parts import FailingClaim, Party, Reason
from convy.compare.summary import Summary
from convy.draw.amount import Amount
from convy.draw.anchor import SIDE_BY_SIDE, Anchor
from convy.draw.blocks import Cells, GroupedTable, Listed
from convy.draw.links import Links
from convy.draw.shown import Attributed

AGENT = 80
"""Characters of an agent's name in a headline."""
NAME = 100
"""Characters of a scenario's name in a table."""
CLAIM = 200
"""Characters of a claim in a table."""
REASON = 300
"""Characters of a judge's reason in a table."""
WHY = 200
"""Characters of a reason (no baseline, a failure's reason) in running text."""
EXPLANATION = 400
"""Characters of the gate's explanation."""
REASONS = 3
"""Reasons shown beside a count of failed attempts or attempts without verdict."""
MESSAGE = 200
"""Characters of a service's or judge's message beside whose fault an attempt was."""
PARTIES: dict[str, str] = {
    "agent": "the agent",
    "user model": "the user model",
    "judge": "the judge",
    "busy": "busy services",
    "convy": "convy itself",
}
"""Whose fault an attempt that did not hold was, as the comment names it."""


class Figures(msgspec.Struct, frozen=True):
    """The comparison's figures and the gate's decision as text, untrusted parts shown by `cells`:
    what the comment and the console both say."""

    comparison: Comparison
    decision: GateDecision
    cells: Cells
    links: Links = Links()
    """Where each scenario's detail can be opened; none (a local run, the console): names unlinked."""

    def agent(self) -> str:
        return self.cells.cell(self.comparison.now.agent, AGENT)

    def explanation(self) -> str:
        """The gate's sentence, with the commonest cause of what went wrong when there is one."""
        cause = self.decision.cause
        text = self.decision.explanation + (f"; commonest: {cause}" if cause else "")
        return self.cells.cell(text.rstrip(". "), EXPLANATION)

    def points(self) -> str:
        """The change of pass rate over the scenarios the test uses, in points."""
        drop = self.comparison.drop
        if drop is None:
            return "unknown"
        size = f"{abs(drop) * 100:.1f}"
        sign = "±" if size == "0.0" else "−" if drop > 0 else "+"
        return f"{sign}{size} points"

    def change(self) -> str:
        """The sentence after the pass rate: versus what, by how much, and whether it is significant;
        under an untrusted judge, nothing that says another rule decided."""
        comparison = self.comparison
        alpha = f"{self.decision.alpha:g}"
        match comparison.baseline:
            case NoBaseline(why=why) if self.decision.rule == "judge-untrusted":
                return f"now; no baseline ({self.cells.cell(why, WHY)})"
            case NoBaseline(why=why):
                return f"now; no baseline ({self.cells.cell(why, WHY)}): the gate decided on the floor only"
            case Summary(rate=rate):
                pass
        against = f"now, {rate.text()} in the baseline"
        drop = comparison.drop
        if drop is None:
            return f"{against}; no scenario is common and unchanged with judged attempts in both runs"
        common = f"{against}: {self.points()} over the scenarios common and unchanged in both"
        if comparison.exact_drop() == 0:
            return f"{common}, no change"
        p, kind = (comparison.p_drop, "drop") if drop > 0 else (comparison.p_gain, "gain")
        if p.below(self.decision.alpha):
            return f"{common}, a significant {kind} ({p.text()}, below alpha {alpha})"
        return f"{common}, not significant ({p.text()}, alpha {alpha})"

    def counted(self, count: int, reasons: tuple[Reason, ...]) -> str:
        if not reasons:
            return f"{count}"
        shown = ", ".join(f"{self.cells.cell(r.reason, 40)} ×{r.count}" for r in reasons[:REASONS])
        return f"{count} ({shown}{', …' if len(reasons) > REASONS else ''})"

    def column(self, summary: Summary) -> tuple[str, ...]:
        """A run's headline figures, in the order of `labels`."""
        return (
            summary.rate.text(),
            f"{summary.pass_k.text()} (k = {summary.repeat})",
            f"{summary.tally.judged - summary.failed_attempts} of {summary.attempts}",
            f"{summary.no_verdict_attempts} ({summary.no_verdict_share.text()})",
            self.counted(summary.failed_attempts, summary.failed),
            summary.cost.text(),
        )

    def labels(self) -> tuple[str, ...]:
        return (
            "pass rate",
            "pass^k",
            "attempts judged",
            "attempts without verdict",
            "attempts failed by the agent",
            "cost",
        )

    def build(self, summary: Summary) -> str:
        return self.cells.cell(summary.agent_version, 60) if summary.agent_version else "unknown"

    def key(self, style: str) -> GroupedTable:
        """The headline figures: now, and with a baseline the baseline and the change (4 columns)."""
        comparison = self.comparison
        now = self.column(comparison.now)
        rows: list[tuple[str, ...]]
        match comparison.baseline:
            case NoBaseline():
                rows = [(label, value) for label, value in zip(self.labels(), now, strict=True)]
                if comparison.now.agent_version:
                    rows.append(("agent build", self.build(comparison.now)))
                headers: tuple[str, ...] = ("", "now")
            case Summary() as baseline:
                changes = (self.points(), "", "", "", "", "")
                before = self.column(baseline)
                rows = list(zip(self.labels(), now, before, changes, strict=True))
                if comparison.now.agent_version or baseline.agent_version:
                    rows.append(("agent build", self.build(comparison.now), self.build(baseline), ""))
                headers = ("", "now", "baseline", "change")
        return GroupedTable(
            headers=headers, groups=tuple((row,) for row in rows), noun="figures", style=style
        )

    def metrics(self, style: str) -> GroupedTable:
        """The medians of every time and token figure, now and with a baseline the change."""
        deltas = self.comparison.deltas
        match self.comparison.baseline:
            case NoBaseline():
                rows: list[tuple[str, ...]] = [
                    (f"median {d.figure}", Amount(value=d.now, unit=d.unit).text()) for d in deltas
                ]
                headers: tuple[str, ...] = ("", "now")
            case Summary():
                rows = [
                    (
                        f"median {d.figure}",
                        Amount(value=d.now, unit=d.unit).text(),
                        Amount(value=d.baseline, unit=d.unit).text(),
                        Amount(value=d.change, unit=d.unit).signed(),
                    )
                    for d in deltas
                ]
                headers = ("", "now", "baseline", "change")
        return GroupedTable(
            headers=headers, groups=tuple((row,) for row in rows), noun="figures", style=style
        )

    def amount(self, delta: Delta) -> Amount:
        return Amount(value=delta.now, unit=delta.unit)

    def parties(self, style: str) -> GroupedTable:
        """Whose fault each attempt that did not hold was, with the commonest reason and message."""
        rows = tuple(
            (
                (
                    PARTIES.get(party.party, party.party),
                    f"{party.count}",
                    self.cells.cell(self.reason(party), 60),
                    self.cells.cell(Attributed(party=party).text(), MESSAGE) if party.message else "—",
                ),
            )
            for party in self.comparison.now.parties
        )
        return GroupedTable(
            headers=("whose", "attempts", "commonest reason", "its message"),
            groups=rows,
            noun="parties",
            style=style,
        )

    def reason(self, party: Party) -> str:
        return "failed claims" if party.reason == "claims_failed" else party.reason

    def claims(self, scenario: ScenarioChange) -> tuple[tuple[str, str], ...]:
        """A scenario's failed claims and checks, each with how often it failed and its reason, said
        by whom: `judge: …`, or `check: …` for a deterministic check."""
        rows = tuple(
            (
                f"{self.cells.cell(c.claim, CLAIM)} ({c.failed} of {c.judged} failed)",
                self.said(c),
            )
            for c in scenario.failing
        )
        failed = tuple(
            (f"agent failed ({r.count} of {scenario.now.judged})", self.why(r)) for r in scenario.failures
        )
        return (*rows, *failed) or (("—", "—"),)

    def why(self, failure: Reason) -> str:
        """The commonest reason the agent failed a scenario's attempts, with the service's words."""
        said = f" — {self.cells.cell(failure.message, MESSAGE)}" if failure.message else ""
        return f"{self.cells.cell(failure.reason, 60)}{said}"

    def said(self, claim: FailingClaim) -> str:
        """A failed claim's reason with who gave it: `judge: …` (`judge (2 of 3 votes): …` when it
        voted), or `check: …` for a check."""
        reason = self.cells.cell(claim.reason, REASON) if claim.reason else "—"
        if claim.check:
            return f"check: {reason}"
        return f"judge ({claim.split}): {reason}" if claim.split else f"judge: {reason}"

    def attention(self) -> tuple[ScenarioChange, ...]:
        """The scenarios that need attention: with a baseline the regressions (see docs/gate.md), without
        one the scenarios with failed claims."""
        if self.decision.verdict != "pass":
            return self.decision.failed_first(self.comparison)
        match self.comparison.baseline:
            case NoBaseline():
                return tuple(s for s in self.comparison.scenarios if s.failing)
            case Summary():
                return self.decision.regressions(self.comparison)

    def troubles_heading(self, count: int) -> tuple[str, str]:
        """The title of what needs attention, and what stands when there is none."""
        if self.decision.verdict != "pass":
            return f"What failed ({count})", "No scenario failed or fell."
        match self.comparison.baseline:
            case NoBaseline():
                return f"Scenarios with failed claims ({count})", "No claim failed."
            case Summary():
                return f"Regressions ({count})", "No scenario regressed."

    def passes(self, s: ScenarioChange) -> str:
        """How many held now, and in the baseline when the scenario is in both."""
        match self.comparison.baseline:
            case NoBaseline():
                return f"{s.now.held} of {s.now.judged} held"
            case Summary():
                return (
                    f"{s.now.held} of {s.now.judged} held, {s.baseline.held} of {s.baseline.judged} "
                    f"in the baseline ({s.p.text()}, {self.status(s)})"
                )

    def status(self, s: ScenarioChange) -> str:
        """A scenario's status as said beside it: a lower one under a significant pooled drop is
        "lower, not significant on its own", never within noise."""
        if s.status == "lower" and self.decision.significant_drop(self.comparison):
            return "lower, not significant on its own"
        return s.status

    def items(self, scenarios: tuple[ScenarioChange, ...]) -> Listed:
        """Scenarios as a markdown list: each linked to its place in the uploaded report page (an
        absolute URL; unlinked when nothing was uploaded), its passes, and
        under it each failed claim with the judge's reason."""
        items = []
        for s in scenarios:
            name = self.cells.cell(s.name, NAME)
            anchor = Anchor(s.name).id()
            where = self.links.difference(anchor) if s.status in SIDE_BY_SIDE else self.links.scenario(anchor)
            shown = f"[{name}](<{where}>)" if where else name
            attack = f" (attack: {self.cells.cell(s.category, NAME)})" if s.category else ""
            lines = [f"- **{shown}**{attack} — {self.passes(s)}"]
            for c in s.failing:
                lines.append(
                    f"  - {self.cells.cell(c.claim, CLAIM)} — failed {c.failed} of {c.judged}; {self.said(c)}"
                )
            for r in s.failures:
                lines.append(f"  - the agent failed {r.count} of {s.now.judged}: {self.why(r)}")
            traces = self.traces(s.name)
            if traces:
                lines.append(f"  - traces of attempts that did not hold: {traces}")
            items.append("\n".join(lines))
        return Listed(items=tuple(items), noun="scenarios")

    def traces(self, name: str) -> str:
        """Links to the traces of the scenario's first attempts that did not hold (trace-url), each
        named by its attempt; "" when there is none."""
        scenario = next((c for c in self.comparison.now.scenarios if c.name == name), None)
        if scenario is None:
            return ""
        linked = ((t.index, self.links.traced(t)) for t in scenario.unheld)
        return " · ".join(f"[attempt {index + 1}](<{url}>)" for index, url in linked if url)

    def troubles(self, style: str) -> GroupedTable:
        """What needs attention as a table (the console): each scenario with its failed claims."""
        groups: list[tuple[tuple[str, ...], ...]] = []
        first: tuple[str, ...]
        match self.comparison.baseline:
            case NoBaseline():
                for s in self.attention():
                    first = (self.named(s), f"{s.now.held}/{s.now.judged}")
                    groups.append(self.grouped(first, self.claims(s)))
                headers: tuple[str, ...] = ("scenario", "passes", "failed claim or check", "reason")
                noun = "scenarios"
            case Summary():
                for s in self.attention():
                    first = (
                        self.named(s),
                        f"{s.now.held}/{s.now.judged}",
                        f"{s.baseline.held}/{s.baseline.judged}",
                        s.p.text(),
                    )
                    groups.append(self.grouped(first, self.claims(s)))
                headers = ("scenario", "now", "baseline", "p", "failed claim or check", "reason")
                noun = "regressions" if self.decision.verdict == "pass" else "scenarios"
        return GroupedTable(headers=headers, groups=tuple(groups), noun=noun, style=style)

    def named(self, scenario: ScenarioChange) -> str:
        """A scenario's name as a table shows it, with its attack category when it is an attack."""
        name = self.cells.cell(scenario.name, NAME)
        return f"{name} (attack: {self.cells.cell(scenario.category, NAME)})" if scenario.category else name

    def grouped(
        self, first: tuple[str, ...], claims: tuple[tuple[str, str], ...]
    ) -> tuple[tuple[str, ...], ...]:
        blank = ("",) * len(first)
        return tuple((first if index == 0 else blank) + claim for index, claim in enumerate(claims))

    def attacks(self, style: str) -> GroupedTable:
        """The attacks by category: how many succeeded of those played, with the Wilson interval,
        and the baseline's beside when there is one (3 columns, for a phone)."""
        rows = tuple(
            (
                (
                    self.cells.cell(line.now.category, NAME),
                    line.now.text(),
                    line.baseline.text(),
                ),
            )
            for line in self.comparison.attacks()
        )
        return GroupedTable(
            headers=("attack category", "now", "baseline"), groups=rows, noun="categories", style=style
        )

    def attacked(self) -> str:
        """The line over the attacks' table: how many attempts played, how many succeeded."""
        lines = self.comparison.attacks()
        played = sum(line.now.played for line in lines)
        succeeded = sum(line.now.succeeded for line in lines)
        return (
            f"{succeeded} of {played} attack attempts succeeded (the agent gave way), across "
            f"{len(lines)} {'category' if len(lines) == 1 else 'categories'}."
        )

    def scenarios(self, style: str) -> GroupedTable:
        """Every scenario in the comparison's order: status, passes now and in the baseline, p."""
        comparison = self.comparison
        rows: list[tuple[str, ...]] = []
        match comparison.baseline:
            case NoBaseline():
                for s in comparison.ordered():
                    rows.append(
                        (self.cells.cell(s.name, NAME), f"{s.now.held}/{s.now.judged}", s.now_rate.text())
                    )
                headers: tuple[str, ...] = ("scenario", "passes", "pass rate")
            case Summary():
                for s in comparison.ordered():
                    now = "—" if s.status in ("removed", "not played") else f"{s.now.held}/{s.now.judged}"
                    before = "—" if s.status == "new" else f"{s.baseline.held}/{s.baseline.judged}"
                    rows.append((s.status, self.cells.cell(s.name, NAME), now, before, s.p.text()))
                headers = ("status", "scenario", "now", "baseline", "p")
        bare = 1 if headers[0] == "scenario" else 2
        return GroupedTable(
            headers=headers, groups=tuple((row,) for row in rows), noun="scenarios", style=style, bare=bare
        )
