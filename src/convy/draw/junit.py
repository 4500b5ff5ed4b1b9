"""A run's comparison as a JUnit XML file, for the CI test reporters that read it: one test suite
(the agent), one test case per scenario, failing where the scenario regressed, fell or held in none
of its judged attempts, skipped where it was not played; the pass rates and p as properties. It
validates against the common JUnit schema (Apache Ant's, as windyroad/JUnit-Schema gives it)."""

from __future__ import annotations

import datetime
import re
import xml.etree.ElementTree as ElementTree

import msgspec

from convy.compare.comparison import Comparison, ScenarioChange
from convy.compare.gate import GateDecision
from convy.compare.parts import ScenarioSummary
from convy.compare.statistics import PValue, Rate, Tally, Unknown
from convy.compare.summary import Summary

UNWRITABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
"""What XML 1.0 cannot hold (control characters, lone surrogates, U+FFFE, U+FFFF), and the C1
controls it discourages: stripped from every text of the agent's, the models' or the scenarios'."""

MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")
"""The schema's timestamp: a date and time without a zone."""

FAILING = ("regressed", "lower")
"""The statuses that fail their test case whatever their tally."""


class JUnitXml(msgspec.Struct, frozen=True, kw_only=True):
    """The JUnit XML of a run's `comparison` and the gate's `decision` on it."""

    comparison: Comparison
    decision: GateDecision

    def text(self) -> str:
        """The whole file: an XML declaration and one `<testsuite>`."""
        suite = self.suite()
        ElementTree.indent(suite)
        return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"

    def suite(self) -> ElementTree.Element:
        now = self.comparison.now
        cases = [self.case(change) for change in self.cases()]
        cases += [self.left_out(name) for name in self.unlisted()]
        failures = sum(1 for case in cases if case.find("failure") is not None)
        skipped = sum(1 for case in cases if case.find("skipped") is not None)
        seconds = sum(float(case.get("time", "0")) for case in cases)
        suite = ElementTree.Element(
            "testsuite",
            {
                "name": XmlText(now.agent).token() or "convy",
                "timestamp": self.timestamp(now),
                "hostname": "localhost",
                "tests": str(len(cases)),
                "failures": str(failures),
                "errors": "0",
                "skipped": str(skipped),
                "time": f"{seconds:.3f}",
            },
        )
        properties = ElementTree.SubElement(suite, "properties")
        for name, value in self.properties():
            ElementTree.SubElement(properties, "property", {"name": XmlText(name).token(), "value": value})
        suite.extend(cases)
        decision = self.decision
        out = ElementTree.SubElement(suite, "system-out")
        out.text = XmlText(f"convy: {decision.verdict} ({decision.rule}): {decision.explanation}").text()
        ElementTree.SubElement(suite, "system-err").text = XmlText(decision.cause).text()
        return suite

    def cases(self) -> tuple[ScenarioChange, ...]:
        """The scenarios of this run and those it left out, in declaration order (a scenario only
        the baseline has is no test of this run)."""
        return tuple(change for change in self.comparison.scenarios if change.status != "removed")

    def unlisted(self) -> tuple[str, ...]:
        """The scenarios this run left out (`match`, a shard) that no comparison lists (no baseline)."""
        listed = {change.name for change in self.comparison.scenarios}
        return tuple(name for name in self.comparison.now.left_out if name not in listed)

    def summaries(self) -> dict[str, ScenarioSummary]:
        return {scenario.name: scenario for scenario in self.comparison.now.scenarios}

    def case(self, change: ScenarioChange) -> ElementTree.Element:
        summary = self.summaries().get(change.name)
        seconds = summary.seconds.total if summary is not None and summary.seconds.total else 0.0
        case = ElementTree.Element(
            "testcase",
            {
                "name": XmlText(change.name).token() or "-",
                "classname": XmlText(self.comparison.now.agent).token() or "convy",
                "time": f"{seconds:.3f}",
            },
        )
        played = change.status != "not played" and summary is not None and summary.attempts > 0
        if not played:
            why = "left out of this run (match or shard)" if change.status == "not played" else "no attempt"
            ElementTree.SubElement(case, "skipped", {"message": f"not played: {why}"})
        elif change.status in FAILING or (change.now.judged and not change.now.held):
            kind = change.status if change.status in FAILING else "nothing-held"
            failure = ElementTree.SubElement(case, "failure", {"message": self.message(change), "type": kind})
            failure.text = self.failing(change, summary)
        return case

    def left_out(self, name: str) -> ElementTree.Element:
        case = ElementTree.Element(
            "testcase",
            {
                "name": XmlText(name).token() or "-",
                "classname": XmlText(self.comparison.now.agent).token() or "convy",
                "time": "0.000",
            },
        )
        why = "not played: left out of this run (match or shard)"
        ElementTree.SubElement(case, "skipped", {"message": why})
        return case

    def message(self, change: ScenarioChange) -> str:
        """Its status (`nothing held` for a scenario that fails for that alone) and counts:
        `regressed: 0 of 3 judged attempts held (baseline 3 of 3), p = 0.05`."""
        status = change.status if change.status in FAILING else "nothing held"
        said = f"{status}: {HeldCount(change.now).text()}"
        if change.baseline.judged:
            said += f" (baseline {change.baseline.held} of {change.baseline.judged})"
        match change.p:
            case PValue() as p:
                said += f", {p.text()}"
            case Unknown():
                pass
        return XmlText(said).text()

    def failing(self, change: ScenarioChange, summary: ScenarioSummary | None) -> str:
        """Its failing claims, each with how often it failed and the judge's (or the check's) reason."""
        lines = []
        for claim in change.failing:
            what = "check" if claim.check else "claim"
            split = f" ({claim.split})" if claim.split else ""
            lines.append(
                f"{what} “{claim.claim}” failed in {claim.failed} of {claim.judged}{split}: {claim.reason}"
            )
        if summary is not None and summary.failed:
            lines.append(f"the agent failed {summary.failed} of {summary.attempts} attempts")
        return XmlText("\n".join(lines) or "no claim held").text()

    def properties(self) -> list[tuple[str, str]]:
        """The run's pass rate, the baseline's, the drop's p and the verdict; each scenario's rates
        and p, named `<scenario>: pass-rate`."""
        comparison, decision = self.comparison, self.decision
        shown = [
            ("verdict", decision.verdict),
            ("rule", decision.rule),
            ("alpha", f"{comparison.alpha:g}"),
            ("pass-rate", PropertyValue(comparison.now.rate).text()),
        ]
        match comparison.baseline:
            case Summary(rate=rate):
                shown.append(("baseline-pass-rate", PropertyValue(rate).text()))
                shown.append(("drop", "" if comparison.drop is None else f"{comparison.drop:.4f}"))
                shown.append(("p", PropertyValue(comparison.p_drop).text()))
            case _:
                pass
        for change in self.cases():
            shown.append((f"{change.name}: pass-rate", PropertyValue(change.now_rate).text()))
            if change.baseline.judged:
                before = PropertyValue(change.baseline_rate).text()
                shown.append((f"{change.name}: baseline-pass-rate", before))
                shown.append((f"{change.name}: p", PropertyValue(change.p).text()))
        return [(name, XmlText(value).text()) for name, value in shown]

    def timestamp(self, now: Summary) -> str:
        """When the run started, as the schema writes it (UTC, no zone)."""
        found = MOMENT.match(now.started)
        if found:
            return found.group(0)
        return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S")


class HeldCount(msgspec.Struct, frozen=True):
    """A tally as the failure's message says it."""

    tally: Tally

    def text(self) -> str:
        if not self.tally.judged:
            return "no attempt judged"
        return f"{self.tally.held} of {self.tally.judged} judged attempts held"


class PropertyValue(msgspec.Struct, frozen=True):
    """A rate or p-value as a property's value: a fraction with four decimals, "" when unknown."""

    value: Rate | PValue | Unknown

    def text(self) -> str:
        match self.value:
            case Rate(value=value) | PValue(value=value):
                return f"{value:.4f}"
            case Unknown():
                return ""


class XmlText(msgspec.Struct, frozen=True):
    """Text of the agent's, the models' or a scenario file's made fit for XML: what XML cannot hold
    stripped (ElementTree escapes the rest)."""

    raw: str

    def text(self) -> str:
        return UNWRITABLE.sub("", self.raw)

    def token(self) -> str:
        """As the schema's tokens are: no line breaks or tabs, no runs of spaces, none at the ends."""
        return " ".join(self.text().split())
