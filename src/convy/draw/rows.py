"""The rows of a run's seven tables, one record type a table (tables.py documents their columns)."""

from __future__ import annotations

from typing import Literal

import msgspec


class Row(msgspec.Struct, frozen=True, kw_only=True):
    """A row of a table: its fields are the table's columns, in order; None is a missing value."""


class AttemptRow(Row, frozen=True, kw_only=True):
    run: str
    agent: str
    scenario: str
    index: int
    fingerprint: str
    decision: Literal["verdict", "failed", "no_verdict"]
    holds: bool | None
    reason: str | None
    turns: int
    seconds: float
    agent_input_tokens: int | None
    agent_output_tokens: int | None
    user_input_tokens: int | None
    user_output_tokens: int | None
    judge_input_tokens: int | None
    judge_output_tokens: int | None
    started: str | None
    ended: str | None


class TurnRow(Row, frozen=True, kw_only=True):
    run: str
    scenario: str
    index: int
    turn: int
    user: str
    agent: str
    seconds: float
    input_tokens: int | None
    output_tokens: int | None
    steps: int
    first: float | None = None


class ClaimRow(Row, frozen=True, kw_only=True):
    run: str
    scenario: str
    index: int
    claim: str
    passed: bool = msgspec.field(name="pass")
    grade: str | None
    reason: str | None


class ScenarioRow(Row, frozen=True, kw_only=True):
    run: str
    scenario: str
    attempts: int
    held: int
    judged: int
    pass_rate: float | None
    low: float | None
    high: float | None
    pass_k: float | None
    failed: int
    no_verdict: int
    category: str


class StepRow(Row, frozen=True, kw_only=True):
    run: str
    scenario: str
    index: int
    turn: int
    step: int
    type: Literal["thought", "call"]
    name: str | None
    arguments: str | None
    result: str | None
    text: str | None


class UsageRow(Row, frozen=True, kw_only=True):
    run: str
    scenario: str
    index: int
    participant: Literal["agent", "user", "judge"]
    input: int | None
    output: int | None


class FailureRow(Row, frozen=True, kw_only=True):
    run: str
    scenario: str
    index: int
    type: Literal["failed", "no_verdict"]
    party: str
    reason: str
    detail: str | None
    status: int | None = None
    message: str | None = None
    raw: str | None = None
