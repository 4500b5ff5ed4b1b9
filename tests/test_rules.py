"""House rules, checked on the source (seed 000's rules as adapted in DESIGN §9)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PRINTING = {"convy/cli.py", "convy_action/action.py", "convy_action/__main__.py"}
ACCUMULATORS = {"Spent", "Figures", "ClaimCount", "ScenarioCount", "Summing"}
"""Structs that add up figures while attempts stream past: they change inside, never leave it."""


def modules() -> list[tuple[str, ast.Module]]:
    return [(str(p.relative_to(SRC)), ast.parse(p.read_text())) for p in sorted(SRC.rglob("*.py"))]


def test_structs_are_frozen() -> None:
    loose = []
    for name, tree in modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name not in ACCUMULATORS:
                bases = {ast.unparse(b) for b in node.bases}
                if "msgspec.Struct" in bases:
                    frozen = any(k.arg == "frozen" and ast.unparse(k.value) == "True" for k in node.keywords)
                    if not frozen:
                        loose.append(f"{name}:{node.name}")
    assert loose == [], f"Structs must be frozen: {loose}"


def test_no_manager_runner_parser_or_handler_classes() -> None:
    named = [
        f"{name}:{node.name}"
        for name, tree in modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and not node.name.startswith("_")
        and node.name.endswith(("Manager", "Runner", "Parser", "Handler"))
    ]
    assert named == []


def test_only_the_composition_roots_print() -> None:
    printing = [
        name
        for name, tree in modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and ast.unparse(node.func) in {"print", "sys.stdout.write", "sys.stderr.write"}
        and name not in PRINTING
    ]
    assert printing == []


def test_no_static_methods() -> None:
    static = [
        f"{name}:{node.name}"
        for name, tree in modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        and any(ast.unparse(d) == "staticmethod" for d in node.decorator_list)
    ]
    assert static == []


def test_the_engine_knows_nothing_of_github_glue() -> None:
    imports = [
        name
        for name, tree in modules()
        if name.startswith("convy/")
        for node in ast.walk(tree)
        if (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("convy_action"))
        or (isinstance(node, ast.Import) and any(a.name.startswith("convy_action") for a in node.names))
    ]
    assert imports == []


def test_no_module_level_functions_but_the_entry_points() -> None:
    allowed = {
        ("convy/cli.py", "main"),
        ("convy/__init__.py", "__getattr__"),
        ("convy_action/__main__.py", "main"),
    }
    functions = [
        (name, node.name)
        for name, tree in modules()
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (name, node.name) not in allowed
    ]
    assert functions == []
