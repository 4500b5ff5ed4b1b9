"""The run folder as it is written and read back: run.json, attempts.jsonl and rejudged.jsonl,
written while the run plays and read by everything after it.

Its parts live beside it: run.json's records (runfile.py), how attempts.jsonl's lines are counted
(attempts.py: each (scenario, index) once, every line not counted reported as damage, as is a
missing attempts.jsonl beside a run.json) and run.lock, held while the run plays (lock.py)."""

from __future__ import annotations

import contextlib
import datetime
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

import msgspec

from convy.data import Data
from convy.errors import ConvyError
from convy.play.outcome import STAMP, Outcome
from convy.store.atomic import AtomicFile
from convy.store.attempts import AttemptLines, Damage
from convy.store.judgerecord import NOT_MEASURED, JudgeRecord
from convy.store.lock import RunLock
from convy.store.runfile import (
    FORMAT,
    Header,
    Interruption,
    Roster,
    RunFile,
    RunSpec,
)

# run.json's records, the attempt lines' and the lock's are handed on: the run folder has one door


class Unreadable(ConvyError, ValueError):
    """run.json cannot be read (truncated, not JSON, not a run); the message says which folder."""


class Rejudged(Data, frozen=True, kw_only=True):
    """One attempt of a baseline run judged again by a later run (one line of that run's
    rejudged.jsonl): today's claims, checks and judge on the baseline's transcript."""

    baseline: str
    """The baseline run's id (its folder's name)."""
    judge_model: str = ""
    outcome: Outcome


class NewerFormat(ConvyError):
    """The folder was written by a newer convy: its format is newer than this code's."""

    def __init__(self, folder: Path, found: int) -> None:
        super().__init__(
            f"{folder}: run folder format {found} is newer than this convy reads (format {FORMAT}); "
            "upgrade convy to read it"
        )
        self.found = found


class Appended:
    """The open attempts.jsonl of a run being played: each outcome is one line, flushed at once."""

    def __init__(self, stream: IO[bytes], written: Callable[[RunSpec], None] | None = None) -> None:
        self._stream = stream
        self._encoder = msgspec.json.Encoder()
        self.stopped = ""
        """Why the run stopped early; set before the play ends, it makes run.json `stopped`."""
        self._written = written

    def respec(self, spec: RunSpec) -> None:
        """Record `spec` in run.json now and when the play ends (a staged run's decisions: decision
        28)."""
        if self._written is not None:
            self._written(spec)

    def record(self, outcome: Outcome) -> None:
        self._stream.write(self._encoder.encode(outcome) + b"\n")
        self._stream.flush()


class RunJournal:
    """A run's folder: results/<agent>/<run-id>/."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @property
    def attempts(self) -> Path:
        return self.folder / "attempts.jsonl"

    @property
    def run_file(self) -> Path:
        return self.folder / "run.json"

    @property
    def rejudged_file(self) -> Path:
        return self.folder / "rejudged.jsonl"

    def rejudged(self, baseline: str) -> tuple[Rejudged, ...]:
        """The baseline's attempts this run judged again, for the baseline run `baseline`; each
        (scenario, index) once (the first line counts), unreadable lines skipped."""
        try:
            data = self.rejudged_file.read_bytes()
        except FileNotFoundError:
            return ()
        except OSError as error:
            raise Unreadable(f"{self.rejudged_file} cannot be read: {self._why(error)}") from None
        decoder = msgspec.json.Decoder(Rejudged)
        found: dict[tuple[str, int], Rejudged] = {}
        for line in data.splitlines():
            try:
                record = decoder.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue
            if record.baseline == baseline:
                found.setdefault((record.outcome.scenario, record.outcome.index), record)
        return tuple(found.values())

    def rejudge(self, record: Rejudged) -> None:
        """Append one re-judged attempt to rejudged.jsonl, flushed at once (after a torn last line
        a line break first, so the record starts on a line of its own)."""
        with self.rejudged_file.open("a+b") as stream:
            stream.seek(0, os.SEEK_END)
            if stream.tell():
                stream.seek(-1, os.SEEK_END)
                if stream.read(1) != b"\n":
                    stream.write(b"\n")
            stream.write(msgspec.json.encode(record) + b"\n")
            stream.flush()

    def header(self) -> RunFile:
        """run.json as written, refusing a newer format; Unreadable when it cannot be read."""
        try:
            raw = self.run_file.read_bytes()
            found = msgspec.json.decode(raw, type=Header).format
        except (OSError, msgspec.DecodeError, msgspec.ValidationError) as error:
            raise Unreadable(f"{self.run_file} cannot be read: {self._why(error)}") from None
        if found > FORMAT:
            raise NewerFormat(self.folder, found)
        try:
            return msgspec.json.decode(raw, type=RunFile)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            raise Unreadable(f"{self.run_file} cannot be read: {self._why(error)}") from None

    def _why(self, error: Exception) -> str:
        if isinstance(error, OSError):
            return error.strerror or type(error).__name__
        return str(error)

    def outcomes(self) -> Iterator[Outcome]:
        """The outcomes on disk, streamed line by line, each (scenario, index) once: the first line
        for it counts — except that a later line supersedes a `not_delivered` one (see docs/run-folder.md),
        so those come last; a malformed line (a torn one included), a line for an attempt run.json
        does not list (another scenario, an index past the repeats) and a second line for the same
        attempt are skipped (`damage()` tells which)."""
        for _, found in self._read():
            if isinstance(found, Outcome):
                yield found

    def damage(self) -> tuple[Damage, ...]:
        """The lines of attempts.jsonl that `outcomes()` skips, and why."""
        return tuple(
            Damage(line=number, why=problem) for number, problem in self._read() if isinstance(problem, str)
        )

    def _read(self) -> Iterator[tuple[int, Outcome | str]]:
        """Each non-blank line's number with its outcome, or the reason it is skipped (line 0: the
        file is missing though run.json is there)."""
        try:
            stream = self.attempts.open("rb")
        except FileNotFoundError:
            if self.run_file.exists():
                yield 0, "missing: the run's attempts are lost, none counts"
            return
        except OSError as error:
            raise Unreadable(f"{self.attempts} cannot be read: {self._why(error)}") from None
        with stream:
            yield from AttemptLines(self._roster()).read(stream)

    def _roster(self) -> Roster:
        """The attempts run.json says the run may hold; empty (any) when it is absent or unreadable
        (reading run.json refuses that on its own)."""
        if not self.run_file.exists():
            return Roster()
        try:
            return self.header().spec.roster()
        except (Unreadable, NewerFormat):
            return Roster()

    def torn(self) -> bool:
        """Whether the last line of attempts.jsonl is torn."""
        if not self.attempts.exists():
            return False
        with self.attempts.open("rb") as stream:
            stream.seek(0, os.SEEK_END)
            size = stream.tell()
            stream.seek(max(0, size - 1))
            return size > 0 and stream.read(1) != b"\n"

    def write(self, run: RunFile, outcomes: Iterable[Outcome]) -> None:
        """Write a whole run at once into this folder (new or empty): its attempts, then run.json,
        each to a temporary file renamed into place (a merge of shards)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        partial = self.attempts.with_suffix(".jsonl.partial")
        encoder = msgspec.json.Encoder()
        with partial.open("wb") as stream:
            for outcome in outcomes:
                stream.write(encoder.encode(outcome) + b"\n")
        os.replace(partial, self.attempts)
        self._write(run)

    def _write(self, run: RunFile) -> None:
        AtomicFile(self.run_file).write_bytes(msgspec.json.format(msgspec.json.encode(run)))

    def _mend(self) -> None:
        """Cut a torn last line, so the next line appended starts on a line of its own."""
        if not self.attempts.exists():
            return
        with self.attempts.open("r+b") as stream:
            data = stream.read()
            if data and not data.endswith(b"\n"):
                stream.truncate(data.rfind(b"\n") + 1)

    @contextlib.contextmanager
    def play(
        self, spec: RunSpec, agent_version: str = "", calibration: JudgeRecord = NOT_MEASURED
    ) -> Iterator[Appended]:
        """Hold the folder while it plays: run.json `running`, then `finished` (`stopped` with its
        cause when the Appended was stopped); `interrupted` on Ctrl+C, SIGTERM or any error, which is
        re-raised. An existing run keeps its start, and its agent version unless a new one is given;
        run.json keeps `calibration`, the judge measured before the first attempt."""
        with RunLock(self.folder).held():
            earlier = self.header() if self.run_file.exists() else None
            started = (
                earlier.started
                if earlier is not None
                else datetime.datetime.now(datetime.UTC).strftime(STAMP)
            )
            version = agent_version or (earlier.agent_version if earlier is not None else "")
            if not calibration.measured and earlier is not None:
                calibration = earlier.judge
            measured = calibration if calibration.measured else msgspec.UNSET
            kept = [spec]

            def running(now: RunSpec) -> None:
                kept[0] = now
                self._write(
                    RunFile(
                        format=FORMAT,
                        spec=now,
                        status="running",
                        started=started,
                        agent_version=version,
                        calibration=measured,
                    )
                )

            running(spec)
            self._mend()
            try:
                with self.attempts.open("ab") as stream:
                    appended = Appended(stream, running)
                    yield appended
            except BaseException as error:
                self._write(
                    RunFile(
                        format=FORMAT,
                        spec=kept[0],
                        status="interrupted",
                        started=started,
                        ended=datetime.datetime.now(datetime.UTC).strftime(STAMP),
                        reason=Interruption(error).reason(),
                        agent_version=version,
                        calibration=measured,
                    )
                )
                raise
            self._write(
                RunFile(
                    format=FORMAT,
                    spec=kept[0],
                    status="stopped" if appended.stopped else "finished",
                    started=started,
                    ended=datetime.datetime.now(datetime.UTC).strftime(STAMP),
                    reason=appended.stopped,
                    agent_version=version,
                    calibration=measured,
                )
            )
