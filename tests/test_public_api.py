"""The public surface: convy.__all__ sorted and complete, and a fake for every interface."""

from __future__ import annotations

import inspect

import convy
from convy import fakes


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert convy.__all__ == sorted(convy.__all__)
    for name in convy.__all__:
        assert getattr(convy, name) is not None, name


def test_every_interface_has_a_working_fake() -> None:
    interfaces = {
        "Agent": (fakes.FakeAgent, ["conversation"]),
        "Conversation": (fakes.FakeConversation, ["__aenter__", "__aexit__", "reply"]),
        "Model": (fakes.FakeModel, ["reply", "name"]),
        "Judge": (fakes.FakeJudge, ["decide"]),
        "Journal": (fakes.MemoryJournal, ["record"]),
    }
    for interface, (fake, methods) in interfaces.items():
        for method in methods:
            assert hasattr(fake, method), f"{fake.__name__} lacks {method} of {interface}"
    assert inspect.iscoroutinefunction(fakes.FakeJudge.decide)
