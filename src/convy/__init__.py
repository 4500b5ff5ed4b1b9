"""convy: play conversation scenarios against an agent, judge them, keep every attempt.

The public API is `__all__` and the module `convy.fakes`: every program built on the engine (the
`convy` command, the GitHub Action) uses these names and no module of the engine's stages.
Names load on first use, so a command starts fast."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from convy.release import VERSION

__version__ = VERSION

_HOMES = {
    "Agent": "convy.play.agent",
    "AgentFailure": "convy.play.agent",
    "Ahead": "convy.conduct.prefetch",
    "Answer": "convy.play.agent",
    "AtomicFile": "convy.store.atomic",
    "Attack": "convy.project.scenario",
    "Busy": "convy.play.busy",
    "Calibrated": "convy.conduct.calibrated",
    "JudgeFingerprint": "convy.conduct.calibrated",
    "KappaText": "convy.draw.judgeline",
    "Calibration": "convy.conduct.calibration",
    "CalibrationFile": "convy.conduct.calibrated",
    "Call": "convy.play.agent",
    "ClaimFigures": "convy.conduct.calibrated",
    "Collector": "convy.store.otlp",
    "CommandLine": "convy.project.commandline",
    "CommentMarkdown": "convy.draw.markdown",
    "Comparison": "convy.compare.comparison",
    "ConfigurationError": "convy.errors",
    "Conversation": "convy.play.agent",
    "ConvyError": "convy.errors",
    "Damage": "convy.store.attempts",
    "Data": "convy.data",
    "Decided": "convy.play.dialog",
    "DemoServers": "convy.demo.servers",
    "Estimating": "convy.conduct.estimate",
    "ExitCodes": "convy.project.commandline",
    "Flags": "convy.project.settings",
    "GateDecision": "convy.compare.gate",
    "Index": "convy.draw.report",
    "Judge": "convy.play.dialog",
    "KeptAttacks": "convy.conduct.kept",
    "LabelDraw": "convy.conduct.labelling",
    "LabelName": "convy.conduct.labelling",
    "LabelSink": "convy.conduct.labelling",
    "LabelledRun": "convy.conduct.labelling",
    "Links": "convy.draw.links",
    "MERGED": "convy.store.merged:WHERE",
    "Marker": "convy.draw.markdown",
    "Message": "convy.play.agent",
    "Model": "convy.play.model",
    "ModelFailure": "convy.play.model",
    "Models": "convy.play.model",
    "NO_BASELINE": "convy.compare.comparison",
    "NewerFormat": "convy.store.journal",
    "NoBaseline": "convy.compare.comparison",
    "OpenAiModel": "convy.play.model",
    "Outcome": "convy.play.outcome",
    "Plain": "convy.play.agent",
    "Plural": "convy.words",
    "Prefetch": "convy.conduct.prefetch",
    "Prepared": "convy.conduct.session",
    "Printed": "convy.draw.progress",
    "Project": "convy.project.project",
    "Provenance": "convy.store.runfile",
    "Rate": "convy.compare.statistics",
    "ReceiverRefused": "convy.store.otlp",
    "RedTeam": "convy.conduct.redteam",
    "Reply": "convy.play.model",
    "Report": "convy.draw.report",
    "Review": "convy.conduct.review",
    "Reviewed": "convy.conduct.review",
    "Run": "convy.conduct.run",
    "RunId": "convy.conduct.run",
    "RunInUse": "convy.store.lock",
    "RunJournal": "convy.store.journal",
    "RunTraces": "convy.store.traces",
    "Runs": "convy.store.runs",
    "RunsDiffer": "convy.compare.comparison",
    "SECRET_LENGTH": "convy.play.errorbody",
    "SETTING_DESCRIPTIONS": "convy.project.names:DESCRIPTIONS",
    "SETTING_NAMES": "convy.project.names:ENGINE",
    "SETTING_SECRETS": "convy.project.names:SECRETS",
    "Scenario": "convy.project.scenario",
    "ScenarioChange": "convy.compare.comparison",
    "Session": "convy.conduct.session",
    "Setting": "convy.project.settings",
    "Settings": "convy.project.settings",
    "Shards": "convy.store.merged",
    "Slice": "convy.project.shard",
    "Sources": "convy.project.sources",
    "Staging": "convy.conduct.stages",
    "Startup": "convy.startup",
    "Stop": "convy.conduct.stop",
    "Subcommand": "convy.project.commandline",
    "StoredRun": "convy.store.runs",
    "Summary": "convy.compare.summary",
    "Summed": "convy.compare.summary",
    "Tables": "convy.draw.tables",
    "Tagged": "convy.data",
    "Thought": "convy.play.agent",
    "TraceLink": "convy.draw.links",
    "TraceUrl": "convy.project.traceurl",
    "Unknown": "convy.compare.statistics",
    "Unlabelled": "convy.conduct.labelling",
    "Untrusted": "convy.draw.untrusted",
    "Usage": "convy.play.agent",
    "Written": "convy.conduct.redteam",
}
"""Where each public name lives: a module, or `module:attribute` for a name it has there."""

__all__ = [
    "Agent",
    "AgentFailure",
    "Ahead",
    "Answer",
    "AtomicFile",
    "Attack",
    "Busy",
    "Calibrated",
    "Calibration",
    "CalibrationFile",
    "Call",
    "ClaimFigures",
    "Collector",
    "CommandLine",
    "CommentMarkdown",
    "Comparison",
    "ConfigurationError",
    "Conversation",
    "ConvyError",
    "Damage",
    "Data",
    "Decided",
    "DemoServers",
    "Estimating",
    "ExitCodes",
    "Flags",
    "GateDecision",
    "Index",
    "Judge",
    "JudgeFingerprint",
    "KappaText",
    "KeptAttacks",
    "LabelDraw",
    "LabelName",
    "LabelSink",
    "LabelledRun",
    "Links",
    "MERGED",
    "Marker",
    "Message",
    "Model",
    "ModelFailure",
    "Models",
    "NO_BASELINE",
    "NewerFormat",
    "NoBaseline",
    "OpenAiModel",
    "Outcome",
    "Plain",
    "Plural",
    "Prefetch",
    "Prepared",
    "Printed",
    "Project",
    "Provenance",
    "Rate",
    "ReceiverRefused",
    "RedTeam",
    "Reply",
    "Report",
    "Review",
    "Reviewed",
    "Run",
    "RunId",
    "RunInUse",
    "RunJournal",
    "RunTraces",
    "Runs",
    "RunsDiffer",
    "SECRET_LENGTH",
    "SETTING_DESCRIPTIONS",
    "SETTING_NAMES",
    "SETTING_SECRETS",
    "Scenario",
    "ScenarioChange",
    "Session",
    "Setting",
    "Settings",
    "Shards",
    "Slice",
    "Sources",
    "Staging",
    "Startup",
    "Stop",
    "StoredRun",
    "Subcommand",
    "Summary",
    "Summed",
    "Tables",
    "Tagged",
    "Thought",
    "TraceLink",
    "TraceUrl",
    "Unknown",
    "Unlabelled",
    "Untrusted",
    "Usage",
    "Written",
]

if TYPE_CHECKING:
    from convy.compare.comparison import NO_BASELINE, Comparison, NoBaseline, RunsDiffer, ScenarioChange
    from convy.compare.gate import GateDecision
    from convy.compare.statistics import Rate, Unknown
    from convy.compare.summary import Summary, Summed
    from convy.conduct.calibrated import Calibrated, CalibrationFile, ClaimFigures, JudgeFingerprint
    from convy.conduct.calibration import Calibration
    from convy.conduct.estimate import Estimating
    from convy.conduct.kept import KeptAttacks
    from convy.conduct.labelling import LabelDraw, LabelledRun, LabelName, LabelSink, Unlabelled
    from convy.conduct.prefetch import Ahead, Prefetch
    from convy.conduct.redteam import RedTeam, Written
    from convy.conduct.review import Review, Reviewed
    from convy.conduct.run import Run, RunId
    from convy.conduct.session import Prepared, Session
    from convy.conduct.stages import Staging
    from convy.conduct.stop import Stop
    from convy.data import Data, Tagged
    from convy.demo.servers import DemoServers
    from convy.draw.judgeline import KappaText
    from convy.draw.links import Links, TraceLink
    from convy.draw.markdown import CommentMarkdown, Marker
    from convy.draw.progress import Printed
    from convy.draw.report import Index, Report
    from convy.draw.tables import Tables
    from convy.draw.untrusted import Untrusted
    from convy.errors import ConfigurationError, ConvyError
    from convy.play.agent import (
        Agent,
        AgentFailure,
        Answer,
        Call,
        Conversation,
        Message,
        Plain,
        Thought,
        Usage,
    )
    from convy.play.busy import Busy
    from convy.play.dialog import Decided, Judge
    from convy.play.errorbody import SECRET_LENGTH
    from convy.play.model import Model, ModelFailure, Models, OpenAiModel, Reply
    from convy.play.outcome import Outcome
    from convy.project.commandline import CommandLine, ExitCodes, Subcommand
    from convy.project.names import DESCRIPTIONS as SETTING_DESCRIPTIONS
    from convy.project.names import ENGINE as SETTING_NAMES
    from convy.project.names import SECRETS as SETTING_SECRETS
    from convy.project.project import Project
    from convy.project.scenario import Attack, Scenario
    from convy.project.settings import Flags, Setting, Settings
    from convy.project.shard import Slice
    from convy.project.sources import Sources
    from convy.project.traceurl import TraceUrl
    from convy.startup import Startup
    from convy.store.atomic import AtomicFile
    from convy.store.attempts import Damage
    from convy.store.journal import NewerFormat, RunJournal
    from convy.store.lock import RunInUse
    from convy.store.merged import WHERE as MERGED
    from convy.store.merged import Shards
    from convy.store.otlp import Collector, ReceiverRefused
    from convy.store.runfile import Provenance
    from convy.store.runs import Runs, StoredRun
    from convy.store.traces import RunTraces
    from convy.words import Plural


def __getattr__(name: str) -> object:
    if name in _HOMES:
        module, _, attribute = _HOMES[name].partition(":")
        return getattr(importlib.import_module(module), attribute or name)
    raise AttributeError(f"module 'convy' has no attribute {name!r}")
