"""ARCHITECTURE.md cannot drift from the code: each module it lists exists, each public class it
names (in backticks, in a module's row) is defined in that module, and no class is listed twice."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLASS = re.compile(r"`([A-Z][a-z]\w*)`")


def rows() -> list[tuple[Path, str]]:
    """(module path, its row's text) for every table row of ARCHITECTURE.md that names a module."""
    found = []
    package, folder = "", ""
    for line in (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8").splitlines():
        if heading := re.match(r"## `src/(\w+)/`", line):
            package, folder = heading.group(1), ""
        elif heading := re.match(r"### `([\w/]+)/`", line):
            folder = heading.group(1) + "/"
        elif line.startswith("### "):
            folder = ""
        elif (cells := re.match(r"\| `([\w/]+\.py)` \|(.*)\|\s*$", line)) and package:
            found.append((ROOT / "src" / package / (folder + cells.group(1)), cells.group(2)))
    return found


def defined(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.ClassDef)}


def test_every_module_listed_exists_and_every_module_is_listed() -> None:
    listed = {path for path, _ in rows()}
    missing = sorted(str(path.relative_to(ROOT)) for path in listed if not path.exists())
    assert missing == []
    modules = {
        path
        for path in (ROOT / "src").rglob("*.py")
        if path.name != "__init__.py" and "template" not in path.parts and path.name != "__main__.py"
    }
    unlisted = sorted(str(path.relative_to(ROOT)) for path in modules - listed)
    assert unlisted == []


def test_every_class_named_is_defined_in_the_module_named() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}: {name}"
        for path, text in rows()
        if path.exists()
        for name in CLASS.findall(text)
        if name not in defined(path)
    ]
    assert wrong == []


def test_each_class_is_listed_once() -> None:
    seen: dict[str, list[str]] = {}
    for path, text in rows():
        for name in set(CLASS.findall(text)):
            seen.setdefault(name, []).append(str(path.relative_to(ROOT)))
    assert {name: where for name, where in seen.items() if len(where) > 1} == {}
