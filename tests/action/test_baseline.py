"""The baseline a run is compared with, found through the local GitHub: `auto` takes the newest
earlier run of the workflow on the branch whose artifact holds a finished run folder, skipping with a
note what is expired, unfinished, too new or hostile; a run id must work or it is exit 2."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from convy.compare.comparison import NoBaseline
from convy.compare.summary import Summed
from convy.errors import ConfigurationError
from convy.store.runs import StoredRun
from convy_action.baseline.readable import Looked
from convy_action.baseline.wanted import AutoBaseline, LocalBaseline, RunBaseline
from convy_action.github.rest import GitHub
from convy_action.github.retries import Retries
from tests.action.folders import all_held, copied, golden, hostile, zipped
from tests.servers.github import FakeGitHub, Run
from tests.support.zips import encrypting

FAST = Retries(attempts=3, first_wait=0.01, longest_wait=2.0, total_wait=5.0, secondary_wait=0.01)
NAME = "convy-support"
START = datetime.now(UTC) - timedelta(days=1)


@pytest.fixture
def github(fake: FakeGitHub, client: httpx.Client) -> GitHub:
    return GitHub(fake.api, fake.token, fake.repository, client, FAST)


def at(minutes: int, fake: FakeGitHub, **kwargs: object) -> Run:
    return fake.run(created_at=START + timedelta(minutes=minutes), **kwargs)  # type: ignore[arg-type]


def auto(github: GitHub, current: Run, scratch: Path, branch: str = "main") -> Looked:
    return AutoBaseline(
        github=github, workflow="ci.yml", branch=branch, name=NAME, current=current.id, scratch=scratch
    ).looked()


def run_of(looked: Looked) -> StoredRun:
    assert isinstance(looked.baseline, StoredRun), looked
    return looked.baseline


def test_auto_takes_the_newest_earlier_run_of_the_workflow_on_the_branch(
    fake: FakeGitHub, github: GitHub, tmp_path: Path
) -> None:
    older = at(0, fake)
    fake.artifact(older, NAME, zipped(golden()))
    newer = at(10, fake)
    fake.artifact(newer, NAME, zipped(all_held(tmp_path / "held")))
    fake.artifact(at(20, fake, head_branch="feature"), NAME, zipped(golden()))
    fake.artifact(at(25, fake, workflow=".github/workflows/other.yml"), NAME, zipped(golden()))
    fake.artifact(at(26, fake, fork=True), NAME, zipped(golden()))
    current = at(30, fake, event="pull_request", head_branch="feature")
    fake.artifact(at(40, fake), NAME, zipped(golden()))  # created after the current run
    looked = auto(github, current, tmp_path / "scratch")
    assert looked.source == f"workflow run {newer.id}" and looked.notes == ()
    assert Summed.of(run_of(looked)).summary().tally.held == 12
    assert run_of(looked).folder.is_relative_to(tmp_path / "scratch")


def test_a_run_without_the_artifact_is_passed_over_without_a_note(
    fake: FakeGitHub, github: GitHub, tmp_path: Path
) -> None:
    fake.artifact(at(0, fake), NAME, zipped(golden()))
    fake.artifact(at(5, fake), "convy-billing", zipped(golden()))
    looked = auto(github, at(10, fake), tmp_path)
    assert Summed.of(run_of(looked)).summary().tally.held == 9 and looked.notes == ()


def test_an_expired_artifact_is_skipped_for_the_next_older(
    fake: FakeGitHub, github: GitHub, tmp_path: Path
) -> None:
    fine = at(0, fake)
    fake.artifact(fine, NAME, zipped(golden()))
    gone = at(5, fake)
    fake.artifact(gone, NAME, zipped(golden()), expired=True)
    looked = auto(github, at(10, fake), tmp_path)
    assert looked.source == f"workflow run {fine.id}"
    assert looked.notes == (f"skipped workflow run {gone.id}: its artifact 'convy-support' has expired",)


def test_unfinished_too_new_and_hostile_artifacts_are_skipped_with_a_note_each(
    fake: FakeGitHub, github: GitHub, tmp_path: Path
) -> None:
    fine = at(0, fake)
    fake.artifact(fine, NAME, zipped(golden()))
    escaping = at(1, fake)
    fake.artifact(escaping, NAME, hostile(golden()))
    newer_format = at(2, fake)
    fake.artifact(newer_format, NAME, zipped(golden("format-99")))
    interrupted = at(3, fake)
    fake.artifact(interrupted, NAME, zipped(golden("format-1-interrupted")))
    broken = at(4, fake)
    fake.artifact(broken, NAME, b"PK\x03\x04 not really a zip")
    locked = at(5, fake)
    fake.artifact(locked, NAME, encrypting(zipped(golden())))
    scratch = tmp_path / "work" / "scratch"
    scratch.mkdir(parents=True)
    looked = auto(github, at(10, fake), scratch)
    assert looked.source == f"workflow run {fine.id}"
    notes = dict(note.split(": ", 1) for note in looked.notes)
    assert list(notes) == [
        f"skipped workflow run {r.id}" for r in (locked, broken, interrupted, newer_format, escaping)
    ]
    assert "entry 'attempts.jsonl' is encrypted" in notes[f"skipped workflow run {locked.id}"]
    assert "not a readable zip" in notes[f"skipped workflow run {broken.id}"]
    assert notes[f"skipped workflow run {interrupted.id}"] == "its run did not finish (status interrupted)"
    assert "format 99 is newer" in notes[f"skipped workflow run {newer_format.id}"]
    assert "escapes the folder" in notes[f"skipped workflow run {escaping.id}"]
    assert not list(tmp_path.rglob("escaped.txt"))


def test_no_usable_run_is_no_baseline_saying_where_it_looked(
    fake: FakeGitHub, github: GitHub, tmp_path: Path
) -> None:
    fake.artifact(at(0, fake), NAME, zipped(golden("format-1-interrupted")))
    looked = auto(github, at(10, fake), tmp_path)
    assert looked.baseline == NoBaseline(
        why="no earlier run of ci.yml on main has a usable artifact 'convy-support'"
    )
    assert len(looked.notes) == 1


def test_a_refused_search_is_no_baseline_with_the_reason(
    fake: FakeGitHub, github: GitHub, tmp_path: Path
) -> None:
    current = at(10, fake)
    fake.fail(403, times=5, path="/actions/", message="Resource not accessible by integration")
    looked = auto(github, current, tmp_path)
    assert isinstance(looked.baseline, NoBaseline)
    assert "403" in looked.baseline.why and "Resource not accessible" in looked.baseline.why
    assert looked.notes[0].endswith("(the job needs `permissions: actions: read`)")


def test_a_named_run_is_the_baseline(fake: FakeGitHub, github: GitHub, tmp_path: Path) -> None:
    named = at(0, fake, head_branch="release")
    fake.artifact(named, NAME, zipped(golden()))
    looked = RunBaseline(github, named.id, NAME, tmp_path).looked()
    assert run_of(looked).file.status == "finished" and looked.source == f"workflow run {named.id}"


@pytest.mark.parametrize(
    "problem", ["no run", "no artifact", "expired", "interrupted", "hostile", "encrypted"]
)
def test_a_named_run_that_cannot_serve_is_a_configuration_error(
    fake: FakeGitHub, github: GitHub, tmp_path: Path, problem: str
) -> None:
    named = at(0, fake)
    match problem:
        case "expired":
            fake.artifact(named, NAME, zipped(golden()), expired=True)
        case "interrupted":
            fake.artifact(named, NAME, zipped(golden("format-1-interrupted")))
        case "hostile":
            fake.artifact(named, NAME, hostile(golden()))
        case "encrypted":
            fake.artifact(named, NAME, encrypting(zipped(golden())))
        case _:
            pass
    run_id = 999 if problem == "no run" else named.id
    with pytest.raises(ConfigurationError) as error:
        RunBaseline(github, run_id, NAME, tmp_path).looked()
    assert error.value.where == "baseline"
    expected = {
        "no run": "workflow run 999 does not exist",
        "no artifact": "'convy-support' of run",
        "expired": "has expired",
        "interrupted": "did not finish",
        "hostile": "refused",
        "encrypted": "is encrypted",
    }[problem]
    assert expected in error.value.message


def test_a_local_folder_serves_in_dry_runs_when_it_is_finished_and_readable(tmp_path: Path) -> None:
    assert LocalBaseline(golden()).looked().source == str(golden())
    torn = run_of(LocalBaseline(copied("format-1-torn", tmp_path / "torn")).looked())
    assert torn.torn()
    for name, words in (("format-99", "newer"), ("format-1-interrupted", "did not finish")):
        with pytest.raises(ConfigurationError) as error:
            LocalBaseline(golden(name)).looked()
        assert words in error.value.message
    with pytest.raises(ConfigurationError, match="not a readable run folder"):
        LocalBaseline(tmp_path / "nothing").looked()


def bomb(folder: Path, expanded: int) -> bytes:
    """The folder's zip with an attempts.jsonl of `expanded` bytes of blank lines (a zip bomb: it
    deflates about a thousandfold)."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.write(folder / "run.json", "run.json")
        with archive.open("attempts.jsonl", "w") as entry:
            entry.write((folder / "attempts.jsonl").read_bytes())
            block = b"\n" * (1024 * 1024)
            for _ in range(expanded // len(block)):
                entry.write(block)
    return buffer.getvalue()


def test_a_baseline_zip_expanding_past_its_cap_is_skipped_with_a_clear_note(
    fake: FakeGitHub, github: GitHub, tmp_path: Path
) -> None:
    fine = at(0, fake)
    fake.artifact(fine, NAME, zipped(golden()))
    huge = at(5, fake)
    content = bomb(golden(), 80 * 1024 * 1024)
    assert len(content) < 1024 * 1024, "a small zip..."
    fake.artifact(huge, NAME, content)
    looked = auto(github, at(10, fake), tmp_path / "scratch")
    assert looked.source == f"workflow run {fine.id}"
    (note,) = looked.notes
    assert f"skipped workflow run {huge.id}" in note and "more than 67108864 bytes (64.0 MiB)" in note
    assert not [p for p in (tmp_path / "scratch").rglob("attempts.jsonl") if p.stat().st_size > 2**20]


def test_under_the_cap_blank_lines_are_nothing_and_the_pages_are_not_unpacked(
    fake: FakeGitHub, github: GitHub, tmp_path: Path
) -> None:
    folder = all_held(tmp_path / "held")
    (folder / "report.html").write_bytes(b"<html>" + b" " * (70 * 1024 * 1024))
    fake.artifact(at(0, fake), NAME, zipped(folder))
    looked = auto(github, at(10, fake), tmp_path / "scratch")
    assert looked.notes == () and Summed.of(run_of(looked)).summary().tally.held == 12
    assert sorted(p.name for p in run_of(looked).folder.iterdir()) == ["attempts.jsonl", "run.json"]


def test_a_baseline_with_fewer_than_half_of_its_attempts_readable_is_not_used(
    fake: FakeGitHub, github: GitHub, tmp_path: Path
) -> None:
    fine = at(0, fake)
    fake.artifact(fine, NAME, zipped(golden()))
    garbled = all_held(tmp_path / "garbled")
    (garbled / "attempts.jsonl").write_bytes(b"x" * 3_000_000 + b"\n")  # one over-long garbage line
    bad = at(5, fake)
    fake.artifact(bad, NAME, zipped(garbled))
    looked = auto(github, at(10, fake), tmp_path / "scratch")
    assert looked.source == f"workflow run {fine.id}"
    assert looked.notes == (
        f"skipped workflow run {bad.id}: only 0 of its 12 attempts can be read (at least half are needed)",
    )


def test_a_baseline_with_half_its_attempts_readable_is_used_and_the_skipped_lines_are_noted(
    fake: FakeGitHub, github: GitHub, tmp_path: Path
) -> None:
    damaged = all_held(tmp_path / "damaged")
    lines = (damaged / "attempts.jsonl").read_bytes().splitlines(keepends=True)
    (damaged / "attempts.jsonl").write_bytes(b"".join(lines[:6]) + b"{not json\n" + lines[0])
    run = at(0, fake)
    fake.artifact(run, NAME, zipped(damaged))
    looked = auto(github, at(10, fake), tmp_path / "scratch")
    assert looked.source == f"workflow run {run.id}"
    assert Summed.of(run_of(looked)).summary().attempts == 6
    assert len(looked.notes) == 2
    assert "attempts.jsonl line 7: malformed" in looked.notes[0]
    assert "attempts.jsonl line 8: a second line for" in looked.notes[1]
