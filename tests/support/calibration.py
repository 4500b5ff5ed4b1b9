"""A project with labels for `convy calibrate`, and a judge that decides each claim by a keyword."""

from __future__ import annotations

import json
from pathlib import Path

from tests.servers.models import ModelServer, Request
from tests.support.command import convy

SCENARIO = """\
name: refund
user: You want a refund.
opening: "My order is late."
claims:
  - The agent offers a refund.
  - The agent asks for the order number.
  - claim: How clear was the agent?
    grades: {clear: true, vague: false}
"""

REFUND, NUMBER, CLEAR = (
    "The agent offers a refund.",
    "The agent asks for the order number.",
    "How clear was the agent?",
)


def judged(agent: str) -> dict[str, bool]:
    """The scripted judge's decisions: a keyword for each claim in what the agent said."""
    return {REFUND: "refund" in agent, NUMBER: "number" in agent, CLEAR: "today" in agent}


def judge(request: Request) -> str:
    """The judge model: one decision per claim, from the Agent lines of the request's transcript."""
    text = request["messages"][-1]["content"]
    agent = " ".join(line for line in text.splitlines() if line.startswith("Agent:"))
    decided = judged(agent)
    decisions: list[dict[str, object]] = [
        {"reason": "refund said" if decided[REFUND] else "no refund", "pass": decided[REFUND]},
        {"reason": "number asked" if decided[NUMBER] else "no number", "pass": decided[NUMBER]},
        {
            "reason": "clear" if decided[CLEAR] else "vague",
            "grade": "clear" if decided[CLEAR] else "vague",
            "pass": decided[CLEAR],
        },
    ]
    return json.dumps({"decisions": decisions})


ATTEMPTS: list[tuple[str, dict[str, bool | str]]] = [
    ("I can refund it today.", {REFUND: True, NUMBER: False, CLEAR: "clear"}),
    ("What is your order number?", {REFUND: False, NUMBER: True, CLEAR: "vague"}),
    ("No refund for you, and no number needed.", {REFUND: False, NUMBER: False, CLEAR: "vague"}),
    ("A refund? What is the number? It arrives today.", {REFUND: False, NUMBER: True, CLEAR: "clear"}),
    ("I will give your money back.", {REFUND: True, NUMBER: False, CLEAR: "vague"}),
    ("Your refund is issued, it arrives today.", {REFUND: True, NUMBER: False, CLEAR: "clear"}),
    ("Tell me the order number and I refund it.", {REFUND: True, NUMBER: True, CLEAR: "vague"}),
    ("Sorry to hear that.", {REFUND: False, NUMBER: False, CLEAR: "clear"}),
    (
        "Your refund is on its way today; your order number was all I needed.",
        {REFUND: True, NUMBER: True, CLEAR: "clear"},
    ),
    (
        "I'll refund it once you give me the order's ID; it arrives today.",
        {REFUND: True, NUMBER: True, CLEAR: "clear"},
    ),
]
"""Labelled attempts: what the agent said and the person's decisions (a grade for the graded claim)."""


def labels_yaml(attempts: list[tuple[str, dict[str, bool | str]]], extra: str = "") -> str:
    items = []
    for agent, decisions in attempts:
        lines = "\n".join(
            f"    {json.dumps(claim)}: {json.dumps(value)}" for claim, value in decisions.items()
        )
        items.append(
            "- scenario: refund\n"
            f'  transcript:\n    - {{user: "My order is late.", agent: {json.dumps(agent)}}}\n'
            f"  decisions:\n{lines}\n"
        )
    return "".join(items) + extra


def project(tmp_path: Path, labels: str | None) -> Path:
    root = tmp_path / "project"
    (root / "scenarios").mkdir(parents=True)
    (root / "scenarios" / "refund.yaml").write_text(SCENARIO)
    if labels is not None:
        (root / "labels").mkdir()
        (root / "labels" / "set.yaml").write_text(labels)
    return root


def calibrate(root: Path, server: ModelServer, *more: str) -> tuple[int, str, str]:
    done = convy(
        "calibrate",
        "--project",
        str(root),
        "--model-url",
        server.url,
        "--judge-model",
        "judge-1",
        *more,
        cwd=root.parent,
    )
    return done.returncode, done.stdout, done.stderr


def written(root: Path) -> list[Path]:
    return sorted((root / "results" / "calibration").glob("*/calibration.json"))
