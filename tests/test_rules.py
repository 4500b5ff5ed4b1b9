"""House rules, checked on the source (seed 000's rules as adapted in DESIGN §9)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PRINTING = {"convy/cli.py", "convy_action/action.py", "convy_action/__main__.py"}
ACCUMULATORS = {"Spent", "Figures", "ClaimCount", "ScenarioCount", "Summing", "Said", "Blame"}
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


STAGES = ("project", "play", "store", "compare", "draw", "run")
"""The engine's sub-packages in pipeline order: each imports only the stages before it."""
BASE = {"convy.data", "convy.errors"}
"""Shared by every stage; they import no stage."""


def engine_imports() -> list[tuple[str, str]]:
    """(importing module, imported convy module) for every import in src/convy, lazy ones too."""
    found = []
    for name, tree in modules():
        if not name.startswith("convy/"):
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.level == 0
                and (node.module or "").startswith("convy")
            ):
                module = node.module or ""
                if module == "convy":
                    found.extend((name, f"convy.{alias.name}") for alias in node.names)
                else:
                    found.append((name, module))
            elif isinstance(node, ast.Import):
                found.extend((name, a.name) for a in node.names if a.name.startswith("convy."))
    return found


def stage_of(path_or_module: str) -> str:
    parts = path_or_module.replace("/", ".").removesuffix(".py").split(".")
    return parts[1] if len(parts) >= 2 and parts[1] in STAGES else ""


def test_each_stage_imports_only_the_stages_before_it() -> None:
    upward = []
    for name, imported in engine_imports():
        mine, theirs = stage_of(name), stage_of(imported)
        if not theirs:
            continue
        if mine and STAGES.index(theirs) > STAGES.index(mine):
            upward.append(f"{name} imports {imported}")
        if name.removesuffix(".py").replace("/", ".") in BASE:
            upward.append(f"{name} (base) imports {imported}")
    assert upward == []


def test_every_engine_module_but_the_base_and_the_command_lives_in_a_stage() -> None:
    top = {
        name
        for name, _ in modules()
        if name.startswith("convy/") and name.count("/") == 1 and name.endswith(".py")
    }
    assert top == {
        "convy/__init__.py",
        "convy/__main__.py",
        "convy/cli.py",
        "convy/data.py",
        "convy/errors.py",
        "convy/fakes.py",
    }


def test_the_engine_has_no_import_cycles() -> None:
    graph: dict[str, set[str]] = {}
    for name, imported in engine_imports():
        source = name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        graph.setdefault(source, set()).add(imported)
    seen: dict[str, int] = {}
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if seen.get(nxt) == 1:
                cycles.append(" -> ".join([*path[path.index(nxt) :], nxt]))
            elif nxt not in seen:
                visit(nxt, [*path, nxt])
        seen[node] = 2

    for node in sorted(graph):
        if node not in seen:
            visit(node, [node])
    assert cycles == []
