"""Module docstrings say what a module is for, not which classes it holds: a list of classes drifts."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
MOST_NAMED = 2
"""How many of its own classes a module's docstring may name: its central one or two, never a list."""
MOST_LINES = 4
"""How many lines the docstring's first paragraph, what the module is for, may take."""
REWRITTEN_ELSEWHERE: dict[str, str] = {}
"""Modules whose docstring a parallel change rewrites with the module, and the rule each breaks until
then; an entry whose module keeps the rule fails the test, so that it is taken out."""


def modules() -> dict[str, str]:
    return {
        str(path.relative_to(SRC)): ast.get_docstring(ast.parse(path.read_text())) or ""
        for path in SRC.rglob("*.py")
    }


def own_classes(name: str) -> set[str]:
    tree = ast.parse((SRC / name).read_text())
    return {node.name for node in tree.body if isinstance(node, ast.ClassDef)}


def named(name: str, text: str) -> list[str]:
    """The module's own top-level classes its docstring names."""
    return sorted(c for c in own_classes(name) if re.search(rf"(?<![\w.]){re.escape(c)}\b", text))


def first_lines(text: str) -> int:
    return len(text.split("\n\n")[0].splitlines())


def breaks(name: str, text: str) -> set[str]:
    return ({"names"} if len(named(name, text)) > MOST_NAMED else set()) | (
        {"lines"} if first_lines(text) > MOST_LINES else set()
    )


def test_every_module_says_what_it_is_for() -> None:
    missing = [name for name, text in modules().items() if not text.strip()]
    assert missing == []


def test_module_docstrings_do_not_list_their_classes() -> None:
    listing = {
        name: named(name, text)
        for name, text in modules().items()
        if "names" in breaks(name, text) and REWRITTEN_ELSEWHERE.get(name) != "names"
    }
    assert listing == {}, f"module docstrings naming more than {MOST_NAMED} of their classes: {listing}"


def test_module_docstrings_start_with_a_short_paragraph() -> None:
    long = {
        name: first_lines(text)
        for name, text in modules().items()
        if "lines" in breaks(name, text) and REWRITTEN_ELSEWHERE.get(name) != "lines"
    }
    assert long == {}, f"say what the module is for in {MOST_LINES} lines at most: {long}"


def test_only_modules_that_break_a_rule_wait_for_their_rewrite() -> None:
    texts = modules()
    kept = {
        name for name, rule in REWRITTEN_ELSEWHERE.items() if rule not in breaks(name, texts.get(name, ""))
    }
    assert kept == set(), f"take these out of REWRITTEN_ELSEWHERE: {sorted(kept)}"
