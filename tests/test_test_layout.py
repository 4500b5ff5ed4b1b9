"""Tests stand on their own: no module of the tests or the benchmarks imports a test module
(`tests/**/test_*.py`); what tests share lives in `tests/support/` or a conftest.py."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def is_test_module(dotted: str) -> bool:
    """Whether a dotted module name names a test module (its last part starts with `test_`)."""
    return dotted.rsplit(".", 1)[-1].startswith("test_")


def imported(path: Path, root: Path) -> list[tuple[int, str]]:
    """Each module the file imports, with the line that imports it: relative imports resolved
    against the file's package, and `from package import name` counted as importing
    `package.name` too (it may be a module)."""
    package = path.relative_to(root).with_suffix("").parts[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join((*base, *(node.module.split(".") if node.module else ())))
            found.append((node.lineno, module))
            found.extend((node.lineno, f"{module}.{alias.name}".lstrip(".")) for alias in node.names)
    return found


def leaning_imports(root: Path) -> list[str]:
    """`file:line imports module` for every import of a test module by a file of the tests or the
    benchmarks under `root`."""
    files = sorted([*root.glob("tests/**/*.py"), *root.glob("benchmarks/**/*.py")])
    return [
        f"{path.relative_to(root)}:{line} imports {module}"
        for path in files
        for line, module in imported(path, root)
        if is_test_module(module)
    ]


def test_no_test_module_imports_another() -> None:
    leaning = leaning_imports(ROOT)
    assert leaning == [], "move what tests share into tests/support/ (or a conftest.py):\n" + "\n".join(
        leaning
    )


def test_every_form_of_importing_a_test_module_is_named_by_file_and_line(tmp_path: Path) -> None:
    engine = tmp_path / "tests" / "engine"
    engine.mkdir(parents=True)
    (engine / "test_cli.py").write_text("def convy() -> None: ...\n")
    (engine / "test_absolute.py").write_text("import os\nfrom tests.engine.test_cli import convy\n")
    (engine / "test_relative.py").write_text("from .test_cli import convy\n")
    (engine / "test_sibling.py").write_text("from . import test_cli\n")
    (engine / "test_package.py").write_text("from tests.engine import test_cli\n")
    (engine / "test_dotted.py").write_text("\n\nimport tests.engine.test_cli\n")
    (engine / "test_inside.py").write_text("def test_x() -> None:\n    from ..engine.test_cli import convy\n")
    (engine / "test_fine.py").write_text("from tests.support.command import convy\nimport pytest\n")
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "run.py").write_text("from tests.engine.test_cli import convy\n")
    assert leaning_imports(tmp_path) == [
        "benchmarks/run.py:1 imports tests.engine.test_cli",
        "tests/engine/test_absolute.py:2 imports tests.engine.test_cli",
        "tests/engine/test_dotted.py:3 imports tests.engine.test_cli",
        "tests/engine/test_inside.py:2 imports tests.engine.test_cli",
        "tests/engine/test_package.py:1 imports tests.engine.test_cli",
        "tests/engine/test_relative.py:1 imports tests.engine.test_cli",
        "tests/engine/test_sibling.py:1 imports tests.engine.test_cli",
    ]
