"""What the runner receives besides the exit code: the step's outputs, appended to $GITHUB_OUTPUT
(multi-line safe), workflow command lines (escaped), an error annotation on each regressed
scenario's file and claim line, and workflow commands switched off around text the action does not
trust. The lines are returned as text for __main__ to print."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Mapping
from pathlib import Path

import msgspec

from convy import Comparison, GateDecision, NoBaseline, Rate, ScenarioChange, Summary, Unknown

OUTPUTS: tuple[str, ...] = (
    "pass-rate",
    "baseline-pass-rate",
    "verdict",
    "run-dir",
    "report",
    "comment-url",
    "artifact-id",
    "junit",
)
"""The action's outputs (action.yml), in order."""

MOST_ANNOTATIONS = 10
"""The runner shows at most 10 error annotations per step."""


class Results(msgspec.Struct, frozen=True, kw_only=True):
    """What the outputs tell: the run's and the baseline's pass rate (a fraction from 0 to 1 with
    four decimals; empty when unknown or without a baseline), the verdict, the run folder and its
    report (relative to the workspace), the comment's URL, the artifact's id and the JUnit XML file
    (relative to the workspace; each empty when none)."""

    comparison: Comparison
    verdict: str
    run_dir: str
    report: str
    comment_url: str = ""
    artifact_id: int = 0
    junit: str = ""

    def values(self) -> dict[str, str]:
        match self.comparison.baseline:
            case Summary(rate=rate):
                before = self.rate(rate)
            case NoBaseline():
                before = ""
        return {
            "pass-rate": self.rate(self.comparison.now.rate),
            "baseline-pass-rate": before,
            "verdict": self.verdict,
            "run-dir": self.run_dir,
            "report": self.report,
            "comment-url": self.comment_url,
            "artifact-id": str(self.artifact_id) if self.artifact_id else "",
            "junit": self.junit,
        }

    def rate(self, rate: Rate | Unknown) -> str:
        match rate:
            case Rate(value=value):
                return f"{value:.4f}"
            case Unknown():
                return ""


class StepOutputs(msgspec.Struct, frozen=True):
    """The file at `path` ($GITHUB_OUTPUT) the step's outputs are appended to."""

    path: Path

    def write(self, values: Mapping[str, str]) -> None:
        """Append each output as `name<<DELIMITER` … `DELIMITER`, the delimiter random and in no value."""
        unknown = sorted(set(values) - set(OUTPUTS))
        if unknown:
            raise ValueError(f"not outputs of the action: {', '.join(unknown)}")
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
        while any(delimiter in value for value in values.values()):
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
        records = "".join(f"{name}<<{delimiter}\n{value}\n{delimiter}\n" for name, value in values.items())
        with self.path.open("a", encoding="utf-8") as file:
            file.write(records)


class WorkflowCommand(msgspec.Struct, frozen=True):
    """A workflow command: `::name key=value,...::message`, its data and properties escaped so no
    text can end it or start another."""

    name: str
    message: str = ""
    properties: tuple[tuple[str, str], ...] = ()

    def text(self) -> str:
        data = self.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        shown = ",".join(
            f"{key}="
            + value.replace("%", "%25")
            .replace("\r", "%0D")
            .replace("\n", "%0A")
            .replace(":", "%3A")
            .replace(",", "%2C")
            for key, value in self.properties
        )
        return f"::{self.name}{' ' + shown if shown else ''}::{data}"


class Stopped(msgspec.Struct, frozen=True):
    """Workflow commands switched off between `start` and `end`, with a token nobody can guess, so
    agent and model text printed between them cannot command the runner."""

    token: str

    @classmethod
    def new(cls) -> Stopped:
        return cls(secrets.token_hex(16))

    @property
    def start(self) -> str:
        return f"::stop-commands::{self.token}"

    @property
    def end(self) -> str:
        return f"::{self.token}::"


class Annotations(msgspec.Struct, frozen=True):
    """An annotation per scenario that did worse than in the baseline, on its scenario file (relative
    to the repository) at the first failing claim's line (see docs/action.md): `::error` only for the
    scenarios under "Regressions" of a failed gate, `::notice` for the other regressed or lower ones.
    `project` is the project folder the scenario files are relative to, `workspace` the repository's
    root."""

    comparison: Comparison
    decision: GateDecision
    project: Path
    workspace: Path

    def commands(self) -> tuple[WorkflowCommand, ...]:
        errors = self.decision.regressions(self.comparison) if self.decision.verdict == "fail" else ()
        named = {change.name for change in errors}
        notices = tuple(
            change
            for change in self.comparison.ordered()
            if change.status in ("regressed", "lower") and change.name not in named
        )
        return tuple(self.command(change, "error") for change in errors[:MOST_ANNOTATIONS]) + tuple(
            self.command(change, "notice") for change in notices[:MOST_ANNOTATIONS]
        )

    def command(self, change: ScenarioChange, kind: str) -> WorkflowCommand:
        line = change.failing[0].line if change.failing and change.failing[0].line else change.line
        message = (
            f"scenario {change.name} {change.status}: {change.now.held} of {change.now.judged} attempts "
            f"held, {change.baseline.held} of {change.baseline.judged} in the baseline ({change.p.text()})"
        )
        if change.failing:
            message += f". Failing claim: {change.failing[0].claim}"
        properties: list[tuple[str, str]] = []
        if change.file:
            properties.append(("file", self.located(change.file)))
            if line:
                properties.append(("line", str(line)))
        properties.append(("title", f"convy: {change.name} {change.status}"))
        return WorkflowCommand(kind, message, tuple(properties))

    def located(self, file: str) -> str:
        path = (self.project / file).resolve()
        root = self.workspace.resolve()
        return path.relative_to(root).as_posix() if path.is_relative_to(root) else file
