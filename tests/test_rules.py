"""House rules, checked on the source (ARCHITECTURE.md and docs/decisions say why)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PRINTING = {"convy/cli.py", "convy_action/action.py", "convy_action/__main__.py"}
ACCUMULATORS = {
    "Spent",
    "FigureValues",
    "ClaimCount",
    "ScenarioCount",
    "Summing",
    "ReasonTally",
    "Blame",
    "Spared",
    "Costs",
    "JudgedAttempts",
}
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
        ("convy/cli.py", "process"),
        ("convy/__init__.py", "__getattr__"),
        ("convy_action/__main__.py", "main"),
    }
    functions = [
        (name, node.name)
        for name, tree in modules()
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (name, node.name) not in allowed
        # pytest calls a plugin's hooks by their names in its module: each is an entry point
        and not (name == "convy/plugin/hooks.py" and node.name.startswith("pytest_"))
    ]
    assert functions == []


STAGES = ("project", "play", "store", "compare", "draw", "conduct", "draft")
"""The engine's sub-packages in pipeline order: each imports only the stages before it."""
BASE = {"convy.data", "convy.errors", "convy.lazy", "convy.release", "convy.startup", "convy.words"}
"""Shared by every stage; they import no stage."""


def imports(package: str = "convy") -> list[tuple[str, str]]:
    """(importing module, imported module of `package`) for every import in src/<package>, lazy
    ones too."""
    found = []
    for name, tree in modules():
        if not name.startswith(f"{package}/"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                module = node.module or ""
                if module == package:
                    found.extend((name, f"{package}.{alias.name}") for alias in node.names)
                elif module.startswith(f"{package}."):
                    found.append((name, module))
            elif isinstance(node, ast.Import):
                found.extend((name, a.name) for a in node.names if a.name.startswith(f"{package}."))
    return found


def engine_imports() -> list[tuple[str, str]]:
    """(importing module, imported convy module) for every import in src/convy, lazy ones too."""
    return imports("convy")


def stage_of(path_or_module: str, stages: tuple[str, ...] = STAGES) -> str:
    parts = path_or_module.replace("/", ".").removesuffix(".py").split(".")
    return parts[1] if len(parts) >= 2 and parts[1] in stages else ""


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


def top_level(package: str) -> set[str]:
    """The modules of src/<package> that are in no sub-package."""
    return {
        name
        for name, _ in modules()
        if name.startswith(f"{package}/") and name.count("/") == 1 and name.endswith(".py")
    }


def test_every_engine_module_but_the_base_and_the_command_lives_in_a_stage() -> None:
    assert top_level("convy") == {
        "convy/__init__.py",
        "convy/__main__.py",
        "convy/cli.py",
        "convy/data.py",
        "convy/errors.py",
        "convy/fakes.py",
        "convy/labels.py",
        "convy/lazy.py",
        "convy/release.py",
        "convy/runs.py",
        "convy/startup.py",
        "convy/tools.py",
        "convy/words.py",
    }


def cycles(package: str) -> list[str]:
    """The import cycles among the modules of src/<package>, each as a path that comes back."""
    graph: dict[str, set[str]] = {}
    for name, imported in imports(package):
        source = name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        graph.setdefault(source, set()).add(imported)
    seen: dict[str, int] = {}
    found = []

    def visit(node: str, path: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if seen.get(nxt) == 1:
                found.append(" -> ".join([*path[path.index(nxt) :], nxt]))
            elif nxt not in seen:
                visit(nxt, [*path, nxt])
        seen[node] = 2

    for node in sorted(graph):
        if node not in seen:
            visit(node, [node])
    return found


def test_the_engine_has_no_import_cycles() -> None:
    assert cycles("convy") == []


ACTION_STAGES = ("runner", "github", "baseline", "publish", "jobs")
"""The action's sub-packages in the order of a job (decision 25): each imports only the stages
before it; the composition root (action.py) and the entry point import any."""


ACTION_BASE = {"convy_action.errors"}
"""Shared by every stage of the action: its exceptions; it imports nothing of the action."""


def test_each_action_stage_imports_only_the_stages_before_it() -> None:
    upward = []
    for name, imported in imports("convy_action"):
        mine, theirs = stage_of(name, ACTION_STAGES), stage_of(imported, ACTION_STAGES)
        if name.removesuffix(".py").replace("/", ".") in ACTION_BASE:
            upward.append(f"{name} (base) imports {imported}")
        if imported in ACTION_BASE:
            continue
        if mine and (not theirs or ACTION_STAGES.index(theirs) > ACTION_STAGES.index(mine)):
            upward.append(f"{name} imports {imported}")
    assert upward == []


def test_every_action_module_but_the_composition_root_lives_in_a_stage() -> None:
    top = top_level("convy_action")
    assert top == {
        "convy_action/__init__.py",
        "convy_action/__main__.py",
        "convy_action/action.py",
        "convy_action/errors.py",
    }
    folders = {name.split("/")[1] for name, _ in modules() if name.startswith("convy_action/")}
    assert folders - {name.split("/")[1] for name in top} == set(ACTION_STAGES)


def test_the_action_has_no_import_cycles() -> None:
    assert cycles("convy_action") == []


def test_no_top_level_class_name_is_defined_in_two_modules() -> None:
    homes: dict[str, list[str]] = {}
    for name, tree in modules():
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                homes.setdefault(node.name, []).append(name)
    twice = {cls: where for cls, where in homes.items() if len(where) > 1}
    assert twice == {}, f"one name, one thing: {twice}"


FACES = {"convy.fakes", "convy.labels", "convy.runs", "convy.tools"}
"""The engine's faces besides `convy` itself: what programs built on it import."""


def test_the_action_uses_the_engine_only_through_its_face() -> None:
    """src/convy_action imports `convy` (its __all__) and its other faces, never a module of a stage."""
    behind = [
        f"{name} imports {imported}"
        for name, tree in modules()
        if name.startswith("convy_action/")
        for node in ast.walk(tree)
        for imported in (
            [node.module or ""]
            if isinstance(node, ast.ImportFrom) and node.level == 0
            else [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else []
        )
        if imported.startswith("convy.") and imported not in FACES
    ]
    assert behind == []


def test_the_command_uses_the_engine_through_its_face_too() -> None:
    behind = [
        f"{name} imports {node.module}"
        for name, tree in modules()
        if name == "convy/cli.py" or name.startswith("convy/command/")
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith("convy.")
        and not (node.module or "").startswith("convy.command")
        and node.module not in FACES
    ]
    assert behind == []


def test_the_engine_has_no_setting_of_the_action() -> None:
    from convy_action.runner.settings import OWN

    own = [name for name in OWN if "-" in name]  # the one-word ones (merge, demo) are plain words too
    spelled = {form for name in own for form in (name, name.replace("-", "_"))}
    found = [
        f"{path.relative_to(SRC)}: {form}"
        for path in sorted((SRC / "convy").rglob("*"))
        if path.is_file() and path.suffix in {".py", ".yml", ".yaml", ".toml", ".md", ".js"}
        for form in sorted(spelled)
        if form in path.read_text(encoding="utf-8")
    ]
    assert found == []


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(SRC)): lines
        for path in sorted(SRC.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert long == {}


def test_every_exception_of_the_action_derives_from_its_one_base_and_is_in_its_tree() -> None:
    import importlib
    import inspect

    from convy_action.errors import ActionError

    tree = (SRC / "convy_action" / "errors.py").read_text(encoding="utf-8")
    strays = []
    for name, _ in modules():
        if not name.startswith("convy_action/") or name.endswith("__main__.py"):
            continue
        module = importlib.import_module(name.removesuffix(".py").removesuffix("/__init__").replace("/", "."))
        for cls_name, cls in inspect.getmembers(module, inspect.isclass):
            ours = cls.__module__ == module.__name__ and issubclass(cls, BaseException)
            drawn = cls is ActionError or cls_name in tree
            if ours and not (issubclass(cls, ActionError) and drawn):
                strays.append(f"{name}:{cls_name}")
    assert strays == []


def test_no_file_cites_the_design_file() -> None:
    """Code and tests cite what users have: a page of docs/ or a decision of docs/decisions, never the
    internal design file (its name built from parts here, so this test does not cite it)."""
    word = re.compile(r"\b" + "DES" + "IGN" + r"\b")
    root = SRC.parent
    files = [
        *SRC.rglob("*.py"),
        *(root / "tests").rglob("*.py"),
        *(root / "benchmarks").rglob("*.py"),
        *(root / "benchmarks").rglob("*.md"),
    ]
    citing = [
        f"{path.relative_to(root)}:{number}"
        for path in sorted(files)
        if "node_modules" not in path.parts
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if word.search(line)
    ]
    assert citing == []
