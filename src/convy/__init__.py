"""convy: play conversation scenarios against an agent, judge them, keep every attempt.

The engine's face. A run is one use case, `Plan`: a client — the `convy` command, the GitHub Action,
the pytest plugin, a program of one's own — brings its settings, its display and its stop signal,
and gets back the reviewed run (the comparison, the gate's decision, the comment)::

    import convy

    with convy.Plan(folder=Path("shop"), flags={"repeat": 3}).opened() as opened:
        reviewed = opened.prepared().played(convy.Terminal(sys.stdout))
    print(reviewed.decision.headline)

`__all__` holds the use case, settings, scenarios, the agent protocol, outcomes and errors. Three
more faces hold what convy's own subcommands build on: `convy.runs` (run folders read back, merged,
exported, reported), `convy.labels` (labels and the judge's calibration) and
`convy.tools` (a command's start-up, command line and text); `convy.fakes` holds a working stand-in
for every interface. Names load on first use, so a command starts fast."""

from __future__ import annotations

from typing import TYPE_CHECKING

from convy.lazy import Face
from convy.release import VERSION

__version__ = VERSION

_FACE = Face(
    "convy",
    {
        # the use case: a project played, reviewed and gated, with the client's display and stop signal
        "convy.conduct.plan": ("Opened", "Plan"),
        "convy.conduct.ready": ("Interrupted", "Ready", "Reviewing"),
        "convy.conduct.review": ("Reviewed",),
        "convy.conduct.display": ("Display", "Silent", "Terminal"),
        "convy.draw.progress": ("Printed",),
        "convy.conduct.stop": ("NoSignal", "Signals", "StopSignal"),
        # settings, and the project and scenarios they describe
        "convy.project.settings": ("Flags", "Setting", "Settings"),
        "convy.project.names": ("SETTING_DESCRIPTIONS", "SETTING_NAMES", "SETTING_SECRETS"),
        "convy.project.sources": ("Sources",),
        "convy.project.shard": ("Slice",),
        "convy.project.project": ("Project",),
        "convy.project.scenario": ("Attack", "Scenario"),
        "convy.project.selection": ("Selection",),
        "convy.project.document": ("Declaration",),
        "convy.project.written": ("scenario",),
        # the agent protocol (a Python agent), and the models of the simulated user and the judge
        "convy.play.agent": (
            "Agent",
            "AgentFailure",
            "Answer",
            "Call",
            "Conversation",
            "Message",
            "Plain",
            "Thought",
            "Usage",
        ),
        "convy.play.busy": ("Busy",),
        "convy.play.model": ("Model", "ModelFailure", "Models", "OpenAiModel", "Reply"),
        "convy.play.dialog": ("Decided", "Judge"),
        # outcomes: each attempt's, the run's summed, compared with a baseline, and the gate's decision
        "convy.play.outcome": ("Outcome",),
        "convy.store.runfile": ("Provenance",),
        "convy.store.runs": ("StoredRun",),
        "convy.compare.summary": ("Summary",),
        "convy.compare.statistics": ("Rate", "Unknown"),
        "convy.compare.comparison": (
            "NO_BASELINE",
            "Comparison",
            "NoBaseline",
            "RunsDiffer",
            "ScenarioChange",
        ),
        "convy.compare.gate": ("GateDecision",),
        # errors a client catches (RunsDiffer and Interrupted above)
        "convy.errors": ("ConfigurationError", "ConvyError"),
        "convy.store.journal": ("NewerFormat",),
        "convy.store.lock": ("RunInUse",),
    },
)

__all__ = _FACE.names()  # noqa: PLE0605 - each name is written once, in _FACE

if TYPE_CHECKING:
    from convy.compare.comparison import NO_BASELINE as NO_BASELINE
    from convy.compare.comparison import Comparison as Comparison
    from convy.compare.comparison import NoBaseline as NoBaseline
    from convy.compare.comparison import RunsDiffer as RunsDiffer
    from convy.compare.comparison import ScenarioChange as ScenarioChange
    from convy.compare.gate import GateDecision as GateDecision
    from convy.compare.statistics import Rate as Rate
    from convy.compare.statistics import Unknown as Unknown
    from convy.compare.summary import Summary as Summary
    from convy.conduct.display import Display as Display
    from convy.conduct.display import Silent as Silent
    from convy.conduct.display import Terminal as Terminal
    from convy.conduct.plan import Opened as Opened
    from convy.conduct.plan import Plan as Plan
    from convy.conduct.ready import Interrupted as Interrupted
    from convy.conduct.ready import Ready as Ready
    from convy.conduct.ready import Reviewing as Reviewing
    from convy.conduct.review import Reviewed as Reviewed
    from convy.conduct.stop import NoSignal as NoSignal
    from convy.conduct.stop import Signals as Signals
    from convy.conduct.stop import StopSignal as StopSignal
    from convy.draw.progress import Printed as Printed
    from convy.errors import ConfigurationError as ConfigurationError
    from convy.errors import ConvyError as ConvyError
    from convy.play.agent import Agent as Agent
    from convy.play.agent import AgentFailure as AgentFailure
    from convy.play.agent import Answer as Answer
    from convy.play.agent import Call as Call
    from convy.play.agent import Conversation as Conversation
    from convy.play.agent import Message as Message
    from convy.play.agent import Plain as Plain
    from convy.play.agent import Thought as Thought
    from convy.play.agent import Usage as Usage
    from convy.play.busy import Busy as Busy
    from convy.play.dialog import Decided as Decided
    from convy.play.dialog import Judge as Judge
    from convy.play.model import Model as Model
    from convy.play.model import ModelFailure as ModelFailure
    from convy.play.model import Models as Models
    from convy.play.model import OpenAiModel as OpenAiModel
    from convy.play.model import Reply as Reply
    from convy.play.outcome import Outcome as Outcome
    from convy.project.document import Declaration as Declaration
    from convy.project.names import SETTING_DESCRIPTIONS as SETTING_DESCRIPTIONS
    from convy.project.names import SETTING_NAMES as SETTING_NAMES
    from convy.project.names import SETTING_SECRETS as SETTING_SECRETS
    from convy.project.project import Project as Project
    from convy.project.scenario import Attack as Attack
    from convy.project.scenario import Scenario as Scenario
    from convy.project.selection import Selection as Selection
    from convy.project.settings import Flags as Flags
    from convy.project.settings import Setting as Setting
    from convy.project.settings import Settings as Settings
    from convy.project.shard import Slice as Slice
    from convy.project.sources import Sources as Sources
    from convy.project.written import scenario as scenario
    from convy.store.journal import NewerFormat as NewerFormat
    from convy.store.lock import RunInUse as RunInUse
    from convy.store.runfile import Provenance as Provenance
    from convy.store.runs import StoredRun as StoredRun

__getattr__ = _FACE.attribute
