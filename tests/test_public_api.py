"""The public surface: convy.__all__ and the other faces sorted, small and complete, each name
written once besides its import, and a fake for every interface."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

import convy
from convy import fakes

FACES = ("convy", "convy.runs", "convy.labels", "convy.tools")


@pytest.mark.parametrize("face", FACES)
def test_all_is_sorted_and_every_name_resolves(face: str) -> None:
    module = importlib.import_module(face)
    assert module.__all__ == sorted(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, name


@pytest.mark.parametrize("face", FACES)
def test_each_name_is_written_once_besides_its_import(face: str) -> None:
    module = importlib.import_module(face)
    text = Path(module.__file__ or "").read_text(encoding="utf-8")
    for name in module.__all__:
        quoted = re.findall(rf'"{name}"', text)
        imported = re.findall(rf"\bimport {name} as {name}$", text, re.MULTILINE)
        assert (len(quoted), len(imported)) == (1, 1), name


def test_the_face_is_what_a_client_needs_and_no_internals() -> None:
    assert len(convy.__all__) <= 60
    for use in ("Plan", "Opened", "Ready", "Reviewed", "Display", "Signals", "Interrupted", "Selection"):
        assert use in convy.__all__
    internals = {"Session", "Prepared", "Run", "Review", "Staging", "Stop", "Ahead", "Prefetch"}
    others = {name for face in FACES[1:] for name in importlib.import_module(face).__all__}
    assert internals.isdisjoint(others | set(convy.__all__))
    assert "DemoServers" not in others | set(convy.__all__)
    assert others.isdisjoint(convy.__all__)
    with pytest.raises(AttributeError, match="no attribute 'Session'"):
        _ = convy.Session  # type: ignore[attr-defined]


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
