"""convy: play conversation scenarios against an agent, judge them, keep every attempt.

The public API is `__all__` and the module `convy.fakes`. Names load on first use, so the command
starts fast."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.3.0"

_HOMES = {
    "Agent": "convy.play.agent",
    "AgentFailure": "convy.play.agent",
    "Answer": "convy.play.agent",
    "Busy": "convy.play.busy",
    "Call": "convy.play.agent",
    "ConfigurationError": "convy.errors",
    "Conversation": "convy.play.agent",
    "Decided": "convy.play.dialog",
    "Judge": "convy.play.dialog",
    "Message": "convy.play.agent",
    "Model": "convy.play.model",
    "ModelFailure": "convy.play.model",
    "Models": "convy.play.model",
    "OpenAiModel": "convy.play.model",
    "Outcome": "convy.play.outcome",
    "Reply": "convy.play.model",
    "Scenario": "convy.project.scenario",
    "Thought": "convy.play.agent",
    "Usage": "convy.play.agent",
}

__all__ = [
    "Agent",
    "AgentFailure",
    "Answer",
    "Busy",
    "Call",
    "ConfigurationError",
    "Conversation",
    "Decided",
    "Judge",
    "Message",
    "Model",
    "ModelFailure",
    "Models",
    "OpenAiModel",
    "Outcome",
    "Reply",
    "Scenario",
    "Thought",
    "Usage",
]

if TYPE_CHECKING:
    from convy.errors import ConfigurationError
    from convy.play.agent import Agent, AgentFailure, Answer, Call, Conversation, Message, Thought, Usage
    from convy.play.busy import Busy
    from convy.play.dialog import Decided, Judge
    from convy.play.model import Model, ModelFailure, Models, OpenAiModel, Reply
    from convy.play.outcome import Outcome
    from convy.project.scenario import Scenario


def __getattr__(name: str) -> object:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'convy' has no attribute {name!r}")
