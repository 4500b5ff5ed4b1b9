"""Reviewing a run: read back and compared with its baseline, the gate's decision on it, and the
files written from them into the run folder — comment.md, report.html, comparison.html — and the
JUnit XML file the `junit` setting names."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from convy.compare.comparison import NO_BASELINE, Compared, Comparison, NoBaseline
from convy.compare.gate import Gate, GateDecision
from convy.compare.rejudged import Rejudgement
from convy.compare.summary import Summary, Summed
from convy.project.settings import Settings
from convy.project.traceurl import TraceUrl
from convy.store.atomic import AtomicFile
from convy.store.runs import StoredRun

if TYPE_CHECKING:
    from convy.draw.links import Links


class Reviewed(msgspec.Struct, frozen=True, kw_only=True):
    """A run's comparison and the gate's decision on it."""

    run: StoredRun
    comparison: Comparison
    decision: GateDecision
    baseline: Rejudgement | NoBaseline = NO_BASELINE
    """The baseline's attempts as the comparison used them, for comparison.html's side by side."""
    trace: TraceUrl = TraceUrl()
    """The trace-url template (checked): each attempt's link to its trace."""
    junit: str = ""
    """Where to write the JUnit XML file, relative to the working folder; "" none."""

    def linked(self, links: Links) -> Links:
        """`links` with each attempt's link to its trace."""
        from convy.draw.links import TraceLink

        return msgspec.structs.replace(links, trace=TraceLink(self.trace))

    def comment(self, links: Links, limit: int = 65_536) -> str:
        """The comment, with `links`, under `limit` characters."""
        from convy.draw.markdown import CommentMarkdown

        return CommentMarkdown(self.comparison, self.decision, self.linked(links), limit=limit).text()

    def console(self) -> str:
        from convy.draw.console import ConsoleText

        return ConsoleText(self.comparison, self.decision).text()

    def written(self, links: Links | None = None, folder: Path = Path()) -> tuple[Path, ...]:
        """Write comment.md (with `links`, none by default) and the pages into the run folder, and
        the JUnit XML file (where `junit` says, from the working `folder`)."""
        from convy.draw.links import Links

        comment = self.run.folder / "comment.md"
        AtomicFile(comment).write_text(self.comment(links or Links()))
        return (comment, *self.pages(), *self.tested(folder))

    def tested(self, folder: Path = Path()) -> tuple[Path, ...]:
        """Write the JUnit XML file where `junit` says, from the working `folder` (its folders made);
        nothing when `junit` is empty."""
        if not self.junit:
            return ()
        from convy.draw.junit import JUnitXml  # the XML writer, imported only when one is asked for

        path = folder / self.junit
        path.parent.mkdir(parents=True, exist_ok=True)
        AtomicFile(path).write_text(JUnitXml(comparison=self.comparison, decision=self.decision).text())
        return (path,)

    def pages(self) -> tuple[Path, ...]:
        """Write report.html and (with a baseline) comparison.html into the run folder."""
        from convy.draw.links import TraceLink
        from convy.draw.report import ComparisonPage, Report

        folder = self.run.folder
        trace = TraceLink(self.trace)
        report = folder / "report.html"
        AtomicFile(report).write_text(
            Report(self.comparison.now, self.run.outcomes(), self.decision, trace).html()
        )
        files = [report]
        match self.comparison.baseline:
            case NoBaseline():
                pass
            case _:
                page = folder / "comparison.html"
                before = self.baseline.outcomes() if isinstance(self.baseline, Rejudgement) else ()
                drawn = ComparisonPage(self.comparison, self.decision, self.run.outcomes(), before, trace)
                AtomicFile(page).write_text(drawn.html())
                files.append(page)
        return tuple(files)


class Review(msgspec.Struct, frozen=True, kw_only=True):
    """A run to review against a baseline run (or none), with the gate's thresholds."""

    run: StoredRun
    baseline: StoredRun | NoBaseline
    gate: Gate
    trace: TraceUrl = TraceUrl()
    junit: str = ""

    @classmethod
    def gated(cls, run: StoredRun, baseline: StoredRun | NoBaseline, settings: Settings) -> Review:
        gate = Gate(
            min_pass_rate=settings.min_pass_rate,
            max_drop=settings.max_drop,
            alpha=settings.alpha,
            max_no_verdict=settings.max_no_verdict,
            max_failed=settings.max_failed,
            min_judge_kappa=settings.min_judge_kappa,
            min_labels=settings.min_labels,
        )
        trace = TraceUrl(settings.trace_url).checked()
        return cls(run=run, baseline=baseline, gate=gate, trace=trace, junit=settings.junit)

    def reviewed(self) -> Reviewed:
        before: Summary | NoBaseline
        baseline: Rejudgement | NoBaseline
        match self.baseline:
            case NoBaseline() as none:
                before = baseline = none
            case StoredRun() as stored:
                again = self.run.journal.rejudged(stored.key)
                baseline = Rejudgement(stored, again, self.run.file.spec)
                before = baseline.summed().summary()
        now = Summed.of(self.run).summary(self.gate.min_labels)
        comparison = Compared(now, before, self.gate.alpha).comparison()
        return Reviewed(
            run=self.run,
            comparison=comparison,
            decision=self.gate.decision(comparison),
            baseline=baseline,
            trace=self.trace,
            junit=self.junit,
        )
