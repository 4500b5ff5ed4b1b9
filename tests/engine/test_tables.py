"""A run's seven tables, from a run folder written by RunJournal: rows per table, unknown values
empty in CSV and null in JSON Lines (never 0), CSV and JSON Lines that parse back."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from convy.compare.statistics import Rate
from convy.compare.summary import Summed
from convy.draw import tables as module
from convy.draw.tables import ExportTable, Tables
from convy.play.agent import Call, Thought, Usage
from convy.play.outcome import ClaimResult, Failed, NoVerdict, Outcome, Turn, Verdict
from convy.store.journal import RunJournal
from convy.store.runfile import RunSpec, ScenarioEntry
from convy.store.runs import Runs, StoredRun

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

COLUMNS = {
    "attempts": [
        "run", "agent", "scenario", "index", "fingerprint", "decision", "holds", "reason", "turns",
        "seconds", "agent_input_tokens", "agent_output_tokens", "user_input_tokens",
        "user_output_tokens", "judge_input_tokens", "judge_output_tokens", "started", "ended",
    ],
    "turns": [
        "run", "scenario", "index", "turn", "user", "agent", "seconds", "input_tokens",
        "output_tokens", "steps", "first",
    ],
    "claims": ["run", "scenario", "index", "claim", "pass", "grade", "reason"],
    "scenarios": [
        "run", "scenario", "attempts", "held", "judged", "pass_rate", "low", "high", "pass_k",
        "failed", "no_verdict", "category",
    ],
    "steps": [
        "run", "scenario", "index", "turn", "step", "type", "name", "arguments", "result", "text",
    ],
    "usage": ["run", "scenario", "index", "participant", "input", "output"],
    "failures": ["run", "scenario", "index", "type", "party", "reason", "detail", "status", "message", "raw"],
}  # fmt: skip
"""The durable format: renaming or removing a column breaks every reader of exported tables."""

SPEC = RunSpec(
    agent="support",
    scenarios=(
        ScenarioEntry(name="refund", fingerprint="f-refund"),
        ScenarioEntry(name="escalate", fingerprint="f-escalate"),
    ),
    repeat=3,
)

TRICKY = 'Sure, "refund" done,\nsee you — 👋'

OUTCOMES = (
    Outcome(
        scenario="refund",
        index=0,
        fingerprint="f-refund",
        turns=(
            Turn(
                user="My order never came.",
                agent="Which order?",
                seconds=0.5,
                usage=Usage(input=10, output=20),
                steps=(
                    Thought(text="look the order up"),
                    Call(name="lookup", arguments='{"order": 4411}', result="lost"),
                ),
            ),
            Turn(user="4411", agent=TRICKY, seconds=0.25, usage=Usage(input=5)),
        ),
        seconds=1.5,
        decision=Verdict(
            holds=True,
            claims=(
                ClaimResult(claim="The agent refunds.", passed=True, reason="It did."),
                ClaimResult(claim="How clear?", passed=True, grade="clear", reason="Clear."),
            ),
        ),
        user_usage=Usage(input=100, output=7),
        started="2026-11-30T18:30:00Z",
        ended="user_finished",
    ),
    Outcome(
        scenario="refund",
        index=1,
        fingerprint="f-refund",
        turns=(
            Turn(
                user="Refund please.",
                agent="No.",
                seconds=0.1,
                usage=Usage(input=0, output=0),
                steps=(Call(name="deny"),),
            ),
        ),
        seconds=0.4,
        decision=Verdict(
            holds=False,
            claims=(
                ClaimResult(claim="The agent refunds.", passed=False, reason="It refused."),
                ClaimResult(claim="How clear?", passed=False, grade="vague"),
            ),
        ),
        user_usage=Usage(input=50, output=3),
        judge_usage=Usage(input=300, output=40),
        started="2026-11-30T18:30:01Z",
        ended="user_finished",
    ),
    Outcome(
        scenario="refund",
        index=2,
        fingerprint="f-refund",
        turns=(Turn(user="Hello?", agent="Hi.", seconds=0.2),),
        seconds=0.9,
        decision=Failed(
            reason="http_500",
            detail="HTTP 500 from the agent: database down",
            status=500,
            message="database down",
        ),
        started="2026-11-30T18:30:02Z",
        ended="agent_failed",
    ),
    Outcome(
        scenario="escalate",
        index=0,
        fingerprint="f-escalate",
        turns=(),
        seconds=0.0,
        decision=NoVerdict(reason="model_failure"),
    ),
)


def stored(folder: Path, outcomes: tuple[Outcome, ...] = OUTCOMES) -> StoredRun:
    journal = RunJournal(folder)
    with journal.play(SPEC) as appended:
        for outcome in outcomes:
            appended.record(outcome)
    return Runs(folder.parent.parent).one(folder)


@pytest.fixture
def tables(tmp_path: Path) -> dict[str, ExportTable]:
    run = stored(tmp_path / "results" / "support" / "run-1")
    return {table.name: table for table in Tables(run, Summed.of(run).summary()).all()}


def as_csv(table: ExportTable) -> list[dict[str, str]]:
    text = io.StringIO(newline="")
    table.csv(text)
    reader = csv.DictReader(io.StringIO(text.getvalue(), newline=""))
    assert reader.fieldnames == COLUMNS[table.name]
    return list(reader)


def as_jsonl(table: ExportTable) -> list[dict[str, object]]:
    text = io.StringIO()
    table.jsonl(text)
    lines = text.getvalue().splitlines()
    parsed = [json.loads(line) for line in lines]
    assert all(list(record) == COLUMNS[table.name] for record in parsed)
    return parsed


def test_the_seven_tables_have_fixed_names_and_columns(tables: dict[str, ExportTable]) -> None:
    assert list(tables) == list(COLUMNS)
    assert {name: list(table.columns()) for name, table in tables.items()} == COLUMNS


def test_the_module_documents_every_column_in_order() -> None:
    doc = module.__doc__ or ""
    for name, columns in COLUMNS.items():
        section = doc.split(f"\n{name} — ", 1)[1].split("\n\n", 1)[0]
        named = [
            column.strip()
            for line in section.splitlines()[1:]
            if line.startswith("    ") and not line.startswith("     ")
            for column in re.split(r"\s{2,}", line.strip())[0].split(",")
            if column.strip()
        ]
        assert named == columns, name


def test_each_table_has_a_row_per_thing_it_counts(tables: dict[str, ExportTable]) -> None:
    counts = {name: len(list(table.rows())) for name, table in tables.items()}
    assert counts == {
        "attempts": 4,
        "turns": 4,
        "claims": 4,
        "scenarios": 2,
        "steps": 3,
        "usage": 12,
        "failures": 2,
    }
    for table in tables.values():
        assert len(as_csv(table)) == counts[table.name]
        assert len(as_jsonl(table)) == counts[table.name]
        assert len(list(table.records())) == counts[table.name]


def test_attempts_keep_unknown_unknown_and_real_zeros_zero(tables: dict[str, ExportTable]) -> None:
    rows = as_csv(tables["attempts"])
    lines = as_jsonl(tables["attempts"])
    first, refused, failed, unjudged = rows
    assert (first["decision"], first["holds"], first["reason"]) == ("verdict", "true", "")
    assert (failed["decision"], failed["holds"], failed["reason"]) == ("failed", "false", "http_500")
    assert (unjudged["decision"], unjudged["holds"], unjudged["reason"]) == (
        "no_verdict",
        "",
        "model_failure",
    )
    assert lines[3]["holds"] is None and lines[2]["holds"] is False and lines[0]["holds"] is True
    # the second turn reported no output tokens: the attempt's output is unknown, its input known
    assert (first["agent_input_tokens"], first["agent_output_tokens"]) == ("15", "")
    assert (lines[0]["agent_input_tokens"], lines[0]["agent_output_tokens"]) == (15, None)
    # nobody reported the judge's tokens of the first attempt; the agent of the second reported 0
    assert (first["judge_input_tokens"], lines[0]["judge_output_tokens"]) == ("", None)
    assert (refused["agent_input_tokens"], lines[1]["agent_output_tokens"]) == ("0", 0)
    # a turn without usage, and an attempt without turns, leave every token unknown
    for row, line in ((failed, lines[2]), (unjudged, lines[3])):
        for side in ("agent", "user", "judge"):
            for kind in ("input", "output"):
                assert row[f"{side}_{kind}_tokens"] == ""
                assert line[f"{side}_{kind}_tokens"] is None
    assert (lines[3]["started"], unjudged["started"], lines[0]["ended"]) == (None, "", "user_finished")
    assert {row["run"] for row in rows} == {"run-1"} and {row["agent"] for row in rows} == {"support"}


def test_turns_carry_text_as_written_and_count_steps(tables: dict[str, ExportTable]) -> None:
    rows = as_csv(tables["turns"])
    lines = as_jsonl(tables["turns"])
    assert [(r["index"], r["turn"], r["steps"]) for r in rows] == [
        ("0", "0", "2"),
        ("0", "1", "0"),
        ("1", "0", "1"),
        ("2", "0", "0"),
    ]
    assert rows[1]["agent"] == TRICKY and lines[1]["agent"] == TRICKY
    # no turn here was streamed: the time to first token is unknown, never 0
    assert {r["first"] for r in rows} == {""} and {line["first"] for line in lines} == {None}
    assert (rows[1]["input_tokens"], rows[1]["output_tokens"]) == ("5", "")
    assert (lines[3]["input_tokens"], lines[3]["output_tokens"]) == (None, None)
    assert lines[2]["input_tokens"] == 0


def test_claims_keep_grades_and_passes(tables: dict[str, ExportTable]) -> None:
    lines = as_jsonl(tables["claims"])
    assert [(c["index"], c["pass"], c["grade"]) for c in lines] == [
        (0, True, None),
        (0, True, "clear"),
        (1, False, None),
        (1, False, "vague"),
    ]
    rows = as_csv(tables["claims"])
    assert [r["pass"] for r in rows] == ["true", "true", "false", "false"]
    assert (rows[0]["grade"], rows[1]["grade"]) == ("", "clear")
    # the judge gave no reason for the last one
    assert (rows[3]["reason"], lines[3]["reason"], lines[2]["reason"]) == ("", None, "It refused.")


def test_scenarios_are_the_summary_s_numbers(tmp_path: Path) -> None:
    run = stored(tmp_path / "results" / "support" / "run-1")
    summary = Summed.of(run).summary()
    table = {t.name: t for t in Tables(run, summary).all()}["scenarios"]
    lines = as_jsonl(table)
    refund = summary.scenarios[0]
    assert isinstance(refund.rate, Rate)
    assert lines[0] == {
        "run": "run-1",
        "scenario": "refund",
        "attempts": 3,
        "held": 1,
        "judged": 3,
        "pass_rate": refund.rate.value,
        "low": refund.rate.low,
        "high": refund.rate.high,
        "pass_k": 0.0,
        "failed": 1,
        "no_verdict": 0,
        "category": "",
    }
    assert lines[1] == {
        "run": "run-1",
        "scenario": "escalate",
        "attempts": 1,
        "held": 0,
        "judged": 0,
        "pass_rate": None,
        "low": None,
        "high": None,
        "pass_k": None,
        "failed": 0,
        "no_verdict": 1,
        "category": "",
    }
    rows = as_csv(table)
    assert float(rows[0]["pass_rate"]) == pytest.approx(1 / 3) and rows[0]["pass_k"] == "0.0"
    assert [rows[1][c] for c in ("pass_rate", "low", "high", "pass_k")] == ["", "", "", ""]


def test_steps_leave_what_does_not_apply_empty(tables: dict[str, ExportTable]) -> None:
    lines = as_jsonl(tables["steps"])
    assert lines[0] == {
        "run": "run-1",
        "scenario": "refund",
        "index": 0,
        "turn": 0,
        "step": 0,
        "type": "thought",
        "name": None,
        "arguments": None,
        "result": None,
        "text": "look the order up",
    }
    assert (lines[1]["type"], lines[1]["name"], lines[1]["arguments"], lines[1]["result"]) == (
        "call",
        "lookup",
        '{"order": 4411}',
        "lost",
    )
    assert (lines[1]["step"], lines[1]["text"]) == (1, None)
    assert (lines[2]["name"], lines[2]["arguments"], lines[2]["result"]) == ("deny", None, None)
    rows = as_csv(tables["steps"])
    assert (rows[1]["arguments"], rows[0]["name"], rows[2]["result"]) == ('{"order": 4411}', "", "")


def test_usage_has_three_participants_per_attempt(tables: dict[str, ExportTable]) -> None:
    lines = as_jsonl(tables["usage"])
    assert [line["participant"] for line in lines] == ["agent", "user", "judge"] * 4
    spent = {
        (line["index"], line["scenario"], line["participant"]): (line["input"], line["output"])
        for line in lines
    }
    assert spent[(0, "refund", "agent")] == (15, None)
    assert spent[(0, "refund", "user")] == (100, 7)
    assert spent[(0, "refund", "judge")] == (None, None)
    assert spent[(1, "refund", "judge")] == (300, 40)
    assert spent[(1, "refund", "agent")] == (0, 0)
    assert spent[(0, "escalate", "agent")] == (None, None)
    rows = as_csv(tables["usage"])
    assert [(r["input"], r["output"]) for r in rows[-3:]] == [("", "")] * 3


def test_failures_are_the_failed_and_unjudged_attempts(tables: dict[str, ExportTable]) -> None:
    lines = as_jsonl(tables["failures"])
    assert [(f["scenario"], f["index"], f["type"], f["reason"], f["detail"]) for f in lines] == [
        ("refund", 2, "failed", "http_500", "HTTP 500 from the agent: database down"),
        ("escalate", 0, "no_verdict", "model_failure", None),
    ]
    assert [(f["status"], f["message"], f["raw"]) for f in lines] == [
        (500, "database down", None),
        (None, None, None),
    ]
    assert as_csv(tables["failures"])[1]["detail"] == ""


def test_records_are_dicts_in_column_order(tables: dict[str, ExportTable]) -> None:
    record = next(tables["claims"].records())
    assert list(record) == COLUMNS["claims"]
    assert record["pass"] is True and record["grade"] is None


def test_an_empty_run_still_writes_each_header(tmp_path: Path) -> None:
    run = stored(tmp_path / "results" / "support" / "run-0", outcomes=())
    for table in Tables(run, Summed.of(run).summary()).all():
        text = io.StringIO(newline="")
        table.csv(text)
        rows = list(csv.reader(io.StringIO(text.getvalue(), newline="")))
        assert rows[0] == COLUMNS[table.name]
        assert len(rows) == (3 if table.name == "scenarios" else 1)
        lines = io.StringIO()
        table.jsonl(lines)
        assert len(lines.getvalue().splitlines()) == (2 if table.name == "scenarios" else 0)


def test_write_puts_a_csv_and_a_jsonl_per_table_in_the_folder(tmp_path: Path) -> None:
    run = stored(tmp_path / "results" / "support" / "run-1")
    target = tmp_path / "out" / "export"
    Tables(run, Summed.of(run).summary()).write(target)
    assert sorted(p.name for p in target.iterdir()) == sorted(
        f"{name}.{ext}" for name in COLUMNS for ext in ("csv", "jsonl")
    )
    with (target / "turns.csv").open(encoding="utf-8", newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert rows[1]["agent"] == TRICKY
    lines = (target / "attempts.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["index"] for line in lines] == [0, 1, 2, 0]


def test_tables_read_the_folder_afresh_each_time(tmp_path: Path) -> None:
    folder = tmp_path / "results" / "support" / "run-1"
    run = stored(folder, outcomes=OUTCOMES[:1])
    attempts = {t.name: t for t in Tables(run, Summed.of(run).summary()).all()}["attempts"]
    assert len(list(attempts.rows())) == 1
    with RunJournal(folder).play(SPEC) as appended:
        appended.record(OUTCOMES[3])
    assert [row["index"] for row in attempts.records()] == [0, 0]


def test_a_golden_folder_exports_one_attempt_row_per_attempt(tmp_path: Path) -> None:
    run = Runs(GOLDEN).one(GOLDEN / "format-1-finished")
    summary = Summed.of(run).summary()
    tables = {t.name: t for t in Tables(run, summary).all()}
    attempts = as_jsonl(tables["attempts"])
    assert len(attempts) == summary.attempts
    judged = [a for a in attempts if a["holds"] is not None]
    assert (sum(bool(a["holds"]) for a in judged), len(judged)) == (summary.tally.held, summary.tally.judged)
    assert len(as_jsonl(tables["usage"])) == 3 * summary.attempts
