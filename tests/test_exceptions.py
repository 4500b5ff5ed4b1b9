"""The engine's exceptions: one base, and one tree in errors.py's docstring that names them all."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import convy.errors
from convy.errors import ConvyError

ENGINE = Path(__file__).resolve().parent.parent / "src" / "convy"
SIGNALS = {"convy.play.bench.Halted"}
"""Control-flow signals, not errors: BaseExceptions on purpose, drawn apart in errors.py's tree."""
BRANCH = re.compile(r"^ +(?:[├└]── )?(\w+)(?: \((\w+)\))? {2,}([\w.]+): \S", re.MULTILINE)
"""One class of the tree: `├── Name (ExtraBase)  module: when it is raised`."""
NODE = re.compile(r"^ +(?:[├└]── )?([A-Z]\w+)(?: \(\w+\))?(?: {2,}|$)")
"""Any class of the trees, roots too: its column tells what it is drawn under."""


def engine_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined in a module of src/convy, by its dotted name."""
    found: dict[str, type[BaseException]] = {}
    for path in sorted(ENGINE.rglob("*.py")):
        parts = path.relative_to(ENGINE.parent).with_suffix("").parts
        if parts[-1] == "__main__":
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == name:
                found[f"{name}.{value.__qualname__}"] = value
    return found


def drawn() -> dict[str, tuple[str, str]]:
    """The tree in errors.py's docstring: each class's module (without `convy.`) and extra base."""
    return {name: (module, extra) for name, extra, module in BRANCH.findall(convy.errors.__doc__ or "")}


def test_the_engine_has_exceptions_to_check() -> None:
    assert len(engine_exceptions()) >= 15


def test_every_engine_exception_derives_from_convy_error() -> None:
    apart = [
        name
        for name, kind in engine_exceptions().items()
        if not issubclass(kind, ConvyError) and name not in SIGNALS
    ]
    assert apart == [], f"derive these from convy.errors.ConvyError: {apart}"


def test_the_signals_are_not_exceptions() -> None:
    found = engine_exceptions()
    for name in SIGNALS:
        assert not issubclass(found[name], Exception), name


def test_errors_docstring_draws_every_engine_exception_in_its_module() -> None:
    tree = drawn()
    wrong = []
    for name, kind in engine_exceptions().items():
        module = kind.__module__.removeprefix("convy.")
        if tree.get(kind.__name__, ("", ""))[0] != module:
            wrong.append(f"{name}: not drawn under {module}")
    assert wrong == [], wrong


def test_errors_docstring_draws_only_exceptions_that_exist() -> None:
    found = {kind.__name__: kind for kind in engine_exceptions().values()}
    for name, (_, extra) in drawn().items():
        assert name in found, f"errors.py draws {name}, which the engine does not define"
        if extra:
            assert extra in {base.__name__ for base in found[name].__mro__}, f"{name} is no {extra}"


def test_errors_docstring_draws_each_exception_under_its_base() -> None:
    found = {kind.__name__: kind for kind in engine_exceptions().values()} | {"BaseException": BaseException}
    above: list[tuple[int, str]] = []
    misplaced = []
    for line in (convy.errors.__doc__ or "").splitlines():
        node = NODE.match(line)
        if not node:
            continue
        column = node.start(1)
        while above and above[-1][0] >= column:
            above.pop()
        if above and above[-1][1] not in {base.__name__ for base in found[node[1]].__bases__}:
            misplaced.append(f"{node[1]} is drawn under {above[-1][1]}")
        above.append((column, node[1]))
    assert misplaced == [], misplaced
