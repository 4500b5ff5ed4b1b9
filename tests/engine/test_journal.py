"""The run folder as written and read back: status, flushing, torn lines, formats, the lock."""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

import msgspec
import pytest

from convy.play.outcome import Failed, Outcome
from convy.store.journal import NewerFormat, RunJournal, Unreadable
from convy.store.lock import RunInUse
from convy.store.runfile import FORMAT, RunSpec, ScenarioEntry

SPEC = RunSpec(agent="a", scenarios=(ScenarioEntry(name="s", fingerprint="f"),), repeat=2)


def outcome(index: int) -> Outcome:
    return Outcome(
        scenario="s", index=index, fingerprint="f", turns=(), seconds=0.1, decision=Failed(reason="http_500")
    )


def test_a_finished_run_is_marked_finished(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    with journal.play(SPEC) as appended:
        appended.record(outcome(0))
    header = journal.header()
    assert (header.status, header.format) == ("finished", FORMAT)


def test_each_attempt_is_on_disk_the_moment_it_is_recorded(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    with journal.play(SPEC) as appended:
        appended.record(outcome(0))
        lines = journal.attempts.read_bytes().splitlines()
        assert len(lines) == 1, "the line must be flushed before the run ends"
        assert journal.header().status == "running"


def test_an_error_marks_the_run_interrupted_and_is_raised_again(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    with pytest.raises(KeyboardInterrupt), journal.play(SPEC) as appended:
        appended.record(outcome(0))
        raise KeyboardInterrupt
    assert journal.header().status == "interrupted"
    assert len(list(journal.outcomes())) == 1


def test_a_torn_last_line_is_skipped_and_cut_before_appending(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    with journal.play(SPEC) as appended:
        appended.record(outcome(0))
    with journal.attempts.open("ab") as stream:
        stream.write(b'{"scenario": "s", "ind')
    assert journal.torn() and len(list(journal.outcomes())) == 1
    with journal.play(SPEC) as appended:
        appended.record(outcome(1))
    assert not journal.torn() and [o.index for o in journal.outcomes()] == [0, 1]


def test_a_malformed_line_anywhere_is_skipped_and_named_by_its_line_number(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    journal.folder.mkdir()
    good = msgspec.json.encode(outcome(0))
    wrong_type = b'{"scenario": "s", "index": "one"}'
    journal.attempts.write_bytes(
        b"{broken\n" + good + b"\n\n" + wrong_type + b"\n" + msgspec.json.encode(outcome(1)) + b"\n"
    )
    assert [o.index for o in journal.outcomes()] == [0, 1]
    damage = journal.damage()
    assert [d.line for d in damage] == [1, 4]
    assert all("malformed" in d.why for d in damage)
    assert damage[0].text().startswith("attempts.jsonl line 1: malformed")


def test_a_second_line_for_the_same_attempt_is_skipped_and_the_first_counts(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    journal.folder.mkdir()
    first = outcome(0)
    second = msgspec.structs.replace(first, decision=Failed(reason="timeout"))
    lines = [first, outcome(1), second, second]
    journal.attempts.write_bytes(b"".join(msgspec.json.encode(o) + b"\n" for o in lines))
    kept = list(journal.outcomes())
    assert [(o.index, o.decision) for o in kept] == [
        (0, Failed(reason="http_500")),
        (1, Failed(reason="http_500")),
    ]
    assert [d.line for d in journal.damage()] == [3, 4]
    assert "the first, on line 1, counts" in journal.damage()[0].why


def test_a_truncated_run_json_is_unreadable_naming_the_file(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    with journal.play(SPEC):
        pass
    journal.run_file.write_bytes(journal.run_file.read_bytes()[:40])
    with pytest.raises(Unreadable) as raised:
        journal.header()
    assert "run.json cannot be read" in str(raised.value)


def test_run_lock_is_removed_when_the_play_ends_and_a_stale_one_is_no_obstacle(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    with journal.play(SPEC) as appended:
        assert (journal.folder / "run.lock").exists()
        appended.record(outcome(0))
    assert not (journal.folder / "run.lock").exists()
    (journal.folder / "run.lock").write_bytes(b"")  # left by a process killed with SIGKILL
    with pytest.raises(KeyboardInterrupt), journal.play(SPEC):
        raise KeyboardInterrupt
    assert not (journal.folder / "run.lock").exists()
    assert sorted(p.name for p in journal.folder.iterdir()) == ["attempts.jsonl", "run.json"]


def test_a_newer_format_is_refused_naming_both_versions(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    journal.folder.mkdir()
    journal.run_file.write_text(json.dumps({"format": 99, "spec": {}, "status": "finished", "started": ""}))
    with pytest.raises(NewerFormat) as raised:
        journal.header()
    assert "99" in str(raised.value) and f"format {FORMAT}" in str(raised.value)


def test_a_second_player_is_refused_while_the_lock_is_held(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    journal.folder.mkdir()
    with (journal.folder / "run.lock").open("a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(RunInUse), journal.play(SPEC):
            pass


def test_nothing_secret_is_in_run_json(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    spec = msgspec.structs.replace(SPEC, user_model="gpt-x", judge_model="gpt-y")
    with journal.play(spec):
        pass
    data = json.loads(journal.run_file.read_text())
    assert data["spec"]["user_model"] == "gpt-x"
    assert "key" not in json.dumps(data).lower()


def written(journal: RunJournal, spec: RunSpec, lines: list[Outcome]) -> None:
    """A finished run of `spec` whose attempts.jsonl holds `lines`."""
    with journal.play(spec):
        pass
    journal.attempts.write_bytes(b"".join(msgspec.json.encode(o) + b"\n" for o in lines))


def test_a_line_for_an_attempt_the_run_does_not_have_is_skipped_and_named(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    ghost = msgspec.structs.replace(outcome(0), scenario="ghost")
    written(journal, SPEC, [outcome(0), outcome(2), outcome(-1), ghost, outcome(7), outcome(1)])
    assert [(o.scenario, o.index) for o in journal.outcomes()] == [("s", 0), ("s", 1)]
    assert [d.text() for d in journal.damage()] == [
        "attempts.jsonl line 2: 's' has no attempt index 2 (the run's are 0 to 1), skipped",
        "attempts.jsonl line 3: 's' has no attempt index -1 (the run's are 0 to 1), skipped",
        "attempts.jsonl line 4: scenario 'ghost' is not one of the run's, skipped",
        "attempts.jsonl line 5: 's' has no attempt index 7 (the run's are 0 to 1), skipped",
    ]


def test_adaptive_repeats_count_up_to_max_repeat(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    spec = msgspec.structs.replace(SPEC, max_repeat=4)
    written(journal, spec, [outcome(i) for i in range(5)])
    assert [o.index for o in journal.outcomes()] == [0, 1, 2, 3]
    assert [d.line for d in journal.damage()] == [5]


def test_a_stray_line_never_supersedes_a_not_delivered_one(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    undelivered = msgspec.structs.replace(outcome(0), decision=Failed(reason="not_delivered"))
    written(journal, SPEC, [undelivered, outcome(5), outcome(0)])
    assert [(o.index, o.decision) for o in journal.outcomes()] == [(0, Failed(reason="http_500"))]
    assert [d.line for d in journal.damage()] == [2]


def test_without_run_json_every_attempt_line_may_belong(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    journal.folder.mkdir()
    journal.attempts.write_bytes(msgspec.json.encode(outcome(9)) + b"\n")
    assert [o.index for o in journal.outcomes()] == [9] and journal.damage() == ()


def test_a_missing_attempts_jsonl_beside_run_json_is_damage(tmp_path: Path) -> None:
    journal = RunJournal(tmp_path / "run")
    with journal.play(SPEC):
        pass
    assert journal.damage() == ()
    journal.attempts.unlink()
    assert list(journal.outcomes()) == []
    (damage,) = journal.damage()
    assert damage.text() == "attempts.jsonl: missing: the run's attempts are lost, none counts"
    assert RunJournal(tmp_path / "nothing").damage() == ()
