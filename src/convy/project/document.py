"""Reading a scenario file: the YAML node tree that tells the line of each key in it, so every error
points at its file and line, and each scenario the file declares with where it stands."""

from __future__ import annotations

import os
import re
from pathlib import Path

import msgspec
import yaml
from yaml.reader import ReaderError

from convy.errors import ConfigurationError
from convy.project.choices import Choices
from convy.project.scenario import Attack, Check, DraftedFrom, Graded, Scenario

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's loader where PyYAML was built with it (its wheels are): about ten times faster than the
pure-Python one, with the same node tree and marks."""


TAB = "a tab character (YAML indents with spaces)"
"""What a YAML error caused by a tab says."""


class YamlTab(msgspec.Struct, frozen=True):
    """A YAML text's error looked at for a tab: where YAML met it, or in the indentation of the
    problem's line."""

    text: str

    def met(self, error: yaml.YAMLError) -> bool:
        mark = getattr(error, "problem_mark", None)
        if mark is None:
            return False
        lines = self.text.splitlines()
        said = lines[mark.line] if mark.line < len(lines) else ""
        indent = said[: len(said) - len(said.lstrip())]
        return "\t" in indent or (0 <= mark.index < len(self.text) and self.text[mark.index] == "\t")


class Declaration(msgspec.Struct, frozen=True, kw_only=True):
    """A scenario and where it is declared: its file (relative to the project, with `/`), the line
    its mapping starts on and the line of each of its claims, then of each of its checks (1-based),
    for errors and annotations."""

    scenario: Scenario
    file: str
    line: int
    claim_lines: tuple[int, ...]

    @property
    def where(self) -> str:
        """`scenarios/refund.yaml:7`."""
        return f"{self.file}:{self.line}"


class Lines(msgspec.Struct, frozen=True):
    """The composed YAML node tree of one file, which tells the line of the node a path names.

    A path is msgspec's: `$` is the document, `.key` a mapping's key, `[n]` a list's item (`$[1].claims[0]`).
    A path ending in a key gives the key's line; one ending in an item gives the item's line; a part that
    is not in the tree (`grades[...]`, a key brought in by a `<<` merge) stops the walk where it is."""

    root: yaml.Node

    def line(self, path: str) -> int:
        """The 1-based line of what `path` names, or of the deepest node on its way."""
        node = self.root
        line = node.start_mark.line + 1
        for key, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path.removeprefix("$")):
            match node:
                case yaml.MappingNode() if key:
                    for name, value in node.value:
                        if name.value == key:
                            line, node = name.start_mark.line + 1, value
                            break
                    else:
                        return line
                case yaml.SequenceNode() if index and int(index) < len(node.value):
                    node = node.value[int(index)]
                    line = node.start_mark.line + 1
                case _:
                    return line
        return line

    def items(self) -> tuple[str, ...]:
        """The paths of the scenarios in the file: `$` for one mapping, `$[0]`, `$[1]`... for a list."""
        match self.root:
            case yaml.SequenceNode():
                return tuple(f"$[{index}]" for index in range(len(self.root.value)))
            case _:
                return ("$",)

    def repeated(self) -> tuple[tuple[str, int, int], ...]:
        """Each key that appears twice in one mapping, with the lines of both (YAML itself keeps only
        the last, so a second `claims:` would silently drop the first)."""
        repeated: list[tuple[str, int, int]] = []
        waiting: list[yaml.Node] = [self.root]
        seen: set[int] = set()
        while waiting:
            node = waiting.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            match node:
                case yaml.MappingNode():
                    first: dict[object, int] = {}
                    for key, value in node.value:
                        match key:
                            case yaml.ScalarNode() if key.value in first:
                                repeated.append((str(key.value), first[key.value], key.start_mark.line + 1))
                            case yaml.ScalarNode():
                                first[key.value] = key.start_mark.line + 1
                        waiting.append(value)
                case yaml.SequenceNode():
                    waiting.extend(node.value)
        return tuple(sorted(repeated, key=lambda twice: twice[2]))


class Document(msgspec.Struct, frozen=True):
    """One scenario file: a YAML mapping (one scenario) or a list of them.

    A scenario's `name` defaults to the file's stem when the file declares one scenario (a mapping,
    or a list of one). In a list of several, each needs its own `name`: names made from positions
    would change when the list changes, and a renamed scenario is compared with nothing."""

    path: Path
    root: Path

    @property
    def file(self) -> str:
        """The file's path relative to the project root, with `/`: `scenarios/refund.yaml`."""
        return Path(os.path.relpath(self.path, self.root)).as_posix()

    def declarations(self) -> tuple[Declaration, ...]:
        """The file's scenarios in their order, each with its lines; ConfigurationError with file and
        line for anything wrong in it (a document nested too deeply to read included)."""
        try:
            return self._declarations()
        except RecursionError:
            raise ConfigurationError(
                self.file, "is nested too deeply to be a scenario file (hundreds of levels)"
            ) from None

    def _declarations(self) -> tuple[Declaration, ...]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise ConfigurationError(self.file, "is not UTF-8 text") from error
        except OSError as error:
            raise ConfigurationError(self.file, f"cannot be read: {error.strerror}") from error
        root, data = self.parsed(text)
        lines = Lines(root)
        try:
            read = msgspec.convert(data, Scenario | list[Scenario])
        except msgspec.ValidationError as error:
            raise self.invalid(error, lines) from error
        match read:
            case Scenario():
                scenarios: tuple[Scenario, ...] = (read,)
            case _:
                scenarios = tuple(read)
        if not scenarios:
            raise ConfigurationError(f"{self.file}:{lines.line('$')}", "the list of scenarios is empty")
        return tuple(
            Declaration(
                scenario=self.named(scenario, len(scenarios), lines.line(path)),
                file=self.file,
                line=lines.line(path),
                claim_lines=tuple(
                    lines.line(f"{path}.{key}[{index}]")
                    for key, count in (("claims", len(scenario.claims)), ("checks", len(scenario.checks)))
                    for index in range(count)
                ),
            )
            for scenario, path in zip((each.armed() for each in scenarios), lines.items(), strict=True)
        )

    def parsed(self, text: str) -> tuple[yaml.Node, object]:
        """The file's node tree and the data built from it; ConfigurationError when it is not YAML,
        holds no document, or repeats a key in a mapping (checked before building, which merges `<<`
        keys into the tree)."""
        try:
            loader = LOADER(text)
        except ReaderError as error:
            line = text.count("\n", 0, error.position) + 1
            raise ConfigurationError(f"{self.file}:{line}", f"YAML error: {error.reason}") from error
        try:
            root = loader.get_single_node()
            if root is None:
                raise ConfigurationError(f"{self.file}:1", "the file is empty: it needs a scenario")
            repeated = Lines(root).repeated()
            if repeated:
                key, first, second = repeated[0]
                raise ConfigurationError(
                    f"{self.file}:{second}",
                    f"key `{key}` appears twice in one mapping (first on line {first})",
                )
            return root, loader.construct_document(root)
        except yaml.MarkedYAMLError as error:
            raise self.unparsed(error, text) from error
        except yaml.YAMLError as error:
            raise ConfigurationError(f"{self.file}:1", f"YAML error: {error}") from error
        finally:
            loader.dispose()

    def unparsed(self, error: yaml.MarkedYAMLError, text: str) -> ConfigurationError:
        """A YAML syntax error at the line of its problem, or of its context (an unclosed quote's
        start) when the problem is only the end of the file, never past the file's last line; a tab
        where YAML met it, or in the
        indentation of the problem's line, is said to be one."""
        problem = error.problem_mark.line + 1 if error.problem_mark is not None else 1
        started = error.context_mark.line + 1 if error.context_mark is not None else problem
        ended = error.problem_mark is None or error.problem_mark.index >= len(text)
        last = max(1, len(text.splitlines()))
        line = min(started if ended else problem, last)
        if YamlTab(text).met(error):
            return ConfigurationError(f"{self.file}:{problem}", TAB)
        context = f"{error.context} (line {started}), " if error.context else ""
        return ConfigurationError(f"{self.file}:{line}", f"YAML syntax error: {context}{error.problem}")

    def named(self, scenario: Scenario, count: int, line: int) -> Scenario:
        """The scenario with its name: its own, else the file's stem when it is the file's only one."""
        if scenario.name:
            return scenario
        if count > 1:
            raise ConfigurationError(
                f"{self.file}:{line}", "a file with several scenarios needs a `name` for each"
            )
        return msgspec.structs.replace(scenario, name=self.path.stem)

    def invalid(self, error: msgspec.ValidationError, lines: Lines) -> ConfigurationError:
        """msgspec's error as a ConfigurationError at the line of the key or item it is about."""
        text, _, at = str(error).partition(" - at `")
        path = at.removesuffix("`") or "$"
        text = Choices(Scenario, path).said(text)
        unknown = re.fullmatch(r"Object contains unknown field `([^`]*)`", text)
        if unknown is not None:
            kind: type[msgspec.Struct] = (
                Graded
                if ".claims[" in path
                else Check
                if ".checks[" in path
                else Attack
                if path.endswith(".attack")
                else DraftedFrom
                if path.endswith(".source")
                else Scenario
            )
            known = ", ".join(field.encode_name for field in msgspec.structs.fields(kind))
            return ConfigurationError(
                f"{self.file}:{lines.line(f'{path}.{unknown.group(1)}')}",
                f"unknown key `{unknown.group(1)}` (the keys are: {known})",
            )
        missing = re.fullmatch(r"Object missing required field `([^`]*)`", text)
        if missing is not None:
            return ConfigurationError(
                f"{self.file}:{lines.line(path)}", f"the required key `{missing.group(1)}` is missing"
            )
        about = re.match(r"`([^`]+)`", text)
        if about is not None:
            return ConfigurationError(f"{self.file}:{lines.line(f'{path}.{about.group(1)}')}", text)
        if path == "$" and text.startswith("Expected `object | array`"):
            return ConfigurationError(
                f"{self.file}:{lines.line(path)}",
                f"a scenario file holds a scenario (a mapping of keys) or a list of them; {text}",
            )
        shown = path.removeprefix("$").removeprefix(".")
        return ConfigurationError(
            f"{self.file}:{lines.line(path)}", f"{text} (at `{shown}`)" if shown else text
        )
