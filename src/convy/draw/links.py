"""Where a run can be read: the run folder's artifact, the workflow run, and the pages uploaded
unzipped — every one an absolute URL, so the comment never posts a relative link — and each
attempt's trace in the team's own tracing tool (`trace-url`)."""

from __future__ import annotations

import re

import msgspec

from convy.compare.parts import Traced
from convy.data import Data
from convy.play.outcome import Outcome
from convy.project.traceurl import TraceUrl

URL = re.compile(r"https?://[^\s<>]{1,2000}")


class TraceLink(msgspec.Struct, frozen=True):
    """How an attempt links to its trace in the team's tracing tool: the trace-url `template`
    (checked; empty: no links)."""

    template: TraceUrl = TraceUrl()

    def of(self, attempt: Outcome | Traced) -> str:
        """The template filled with the attempt's trace id and conversation, URL-encoded; "" without
        a template, or when the attempt lacks a value the template names (no trace id: trace context
        was off, or the agent is a Python one)."""
        return self.template.filled(attempt.trace_id, attempt.conversation)


class Links(Data, frozen=True, kw_only=True):
    """Where the run can be read, every one an absolute http(s) URL (no blanks or angle brackets),
    empty when there is none (a dry run, a local run): `report` the run folder's artifact, `run`
    the workflow run, `report_page` and `comparison_page` the pages uploaded unzipped (a browser
    opens them). The comment never posts a relative link."""

    report: str = ""
    run: str = ""
    report_page: str = ""
    comparison_page: str = ""
    trace: TraceLink = TraceLink()
    """Each attempt's link to its trace (the trace-url setting)."""

    def __post_init__(self) -> None:
        for url in (self.report, self.run, self.report_page, self.comparison_page):
            if url and not URL.fullmatch(url):
                raise ValueError(
                    "a link is an http(s) URL without blanks or angle brackets, up to 2000 characters"
                )

    def scenario(self, anchor: str) -> str:
        """Where a scenario's detail is: its place (`#anchor`) in the report page, else the run's
        artifact (where the pages could not be uploaded on their own), else "" (nothing uploaded)."""
        if self.report_page:
            return f"{self.report_page}#{anchor}"
        return self.report

    def difference(self, anchor: str) -> str:
        """Where a scenario that changed is shown side by side with the baseline: its block
        (`#diff-anchor`) in the comparison page, else where `scenario` says (no comparison page)."""
        if self.comparison_page:
            return f"{self.comparison_page}#diff-{anchor}"
        return self.scenario(anchor)

    def traced(self, attempt: Outcome | Traced) -> str:
        """The link to an attempt's trace (TraceLink), "" when there is none."""
        return self.trace.of(attempt)

    def markdown(self) -> str:
        report = f"[report artifact](<{self.report}>)" if self.report else "report artifact: not uploaded"
        pages = [f"[report page](<{self.report_page}>)"] if self.report_page else []
        if self.comparison_page:
            pages.append(f"[comparison page](<{self.comparison_page}>)")
        run = f"[workflow run](<{self.run}>)" if self.run else "workflow run: none (a local run)"
        return " · ".join([f"📄 {report}", *pages, f"⚙️ {run}"])
