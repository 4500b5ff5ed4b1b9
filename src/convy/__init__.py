"""convy: play conversation scenarios against an agent, judge them, keep every attempt.

The public API is `__all__` and the module `convy.fakes`. Names load on first use, so the command
starts fast."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

_HOMES = {
    "Agent": "convy.agent",
    "AgentFailure": "convy.agent",
    "Answer": "convy.agent",
    "Busy": "convy.busy",
    "Call": "convy.agent",
    "ConfigurationError": "convy.errors",
    "Conversation": "convy.agent",
    "Decided": "convy.dialog",
    "Judge": "convy.dialog",
    "Message": "convy.agent",
    "Model": "convy.model",
    "ModelFailure": "convy.model",
    "Models": "convy.model",
    "OpenAiModel": "convy.model",
    "Outcome": "convy.outcome",
    "Reply": "convy.model",
    "Scenario": "convy.scenario",
    "Thought": "convy.agent",
    "Usage": "convy.agent",
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
    from convy.agent import Agent, AgentFailure, Answer, Call, Conversation, Message, Thought, Usage
    from convy.busy import Busy
    from convy.dialog import Decided, Judge
    from convy.errors import ConfigurationError
    from convy.model import Model, ModelFailure, Models, OpenAiModel, Reply
    from convy.outcome import Outcome
    from convy.scenario import Scenario


def __getattr__(name: str) -> object:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'convy' has no attribute {name!r}")
