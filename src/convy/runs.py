"""Run folders after a run: read back, merged from shards, exported as traces, drawn as pages and
tables, attacks written and kept — what `convy report`, `compare`, `merge`, `export` and
`redteam` and the action's merge job build on. Names load on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from convy.lazy import Face

_FACE = Face(
    "convy.runs",
    {
        # run folders read back, and what they are found by
        "convy.store.runs": ("Runs",),
        "convy.store.journal": ("RunJournal",),
        "convy.store.attempts": ("Damage",),
        "convy.conduct.run": ("RunId",),
        "convy.compare.summary": ("Summed",),
        # shards merged into one run, and a run's traces exported
        "convy.store.merged": ("MERGED", "Shards"),
        "convy.store.traces": ("RunTraces",),
        "convy.store.otlp": ("Collector", "ReceiverRefused"),
        # what is drawn from them: pages, tables, the comment's markers and links
        "convy.draw.report": ("Index", "Report"),
        "convy.draw.tables": ("Tables",),
        "convy.draw.markdown": ("CommentMarkdown", "Marker"),
        "convy.draw.links": ("Links", "TraceLink"),
        "convy.project.traceurl": ("TraceUrl",),
        # recorded conversations (traces, logs, run folders) drafted into scenario files
        "convy.draft.drafting": ("Drafted", "Drafts", "Kept", "Recording"),
        "convy.draft.phoenix": ("PhoenixProject",),
        # attack scenarios written from the red-team catalogue, and a run's successful attacks kept
        "convy.conduct.redteam": ("RedTeam", "WrittenFiles"),
        "convy.conduct.kept": ("KeptAttacks",),
    },
)

__all__ = _FACE.names()  # noqa: PLE0605 - each name is written once, in _FACE

if TYPE_CHECKING:
    from convy.compare.summary import Summed as Summed
    from convy.conduct.kept import KeptAttacks as KeptAttacks
    from convy.conduct.redteam import RedTeam as RedTeam
    from convy.conduct.redteam import WrittenFiles as WrittenFiles
    from convy.conduct.run import RunId as RunId
    from convy.draft.drafting import Drafted as Drafted
    from convy.draft.drafting import Drafts as Drafts
    from convy.draft.drafting import Kept as Kept
    from convy.draft.drafting import Recording as Recording
    from convy.draft.phoenix import PhoenixProject as PhoenixProject
    from convy.draw.links import Links as Links
    from convy.draw.links import TraceLink as TraceLink
    from convy.draw.markdown import CommentMarkdown as CommentMarkdown
    from convy.draw.markdown import Marker as Marker
    from convy.draw.report import Index as Index
    from convy.draw.report import Report as Report
    from convy.draw.tables import Tables as Tables
    from convy.project.traceurl import TraceUrl as TraceUrl
    from convy.store.attempts import Damage as Damage
    from convy.store.journal import RunJournal as RunJournal
    from convy.store.merged import MERGED as MERGED
    from convy.store.merged import Shards as Shards
    from convy.store.otlp import Collector as Collector
    from convy.store.otlp import ReceiverRefused as ReceiverRefused
    from convy.store.runs import Runs as Runs
    from convy.store.traces import RunTraces as RunTraces

__getattr__ = _FACE.attribute
