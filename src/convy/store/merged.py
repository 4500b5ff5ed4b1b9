"""Merging the runs of the n shards of one run (`shard: k/n`) into one normal run folder: the whole
run's scenarios in declaration order, every shard's attempts, and the shards listed in its
provenance.

Merging refuses, naming the difference, shards whose specs differ other than by their shard, a
missing or doubled shard, and two shards holding the same attempt. The baseline attempts the shards
judged again (rejudged.jsonl) are kept too."""

from __future__ import annotations

from pathlib import Path

import msgspec

from convy.errors import ConfigurationError
from convy.play.outcome import Outcome
from convy.store.journal import RunJournal
from convy.store.runfile import FORMAT, Merged, MergedShard, RunFile, RunSpec, Shard
from convy.store.runs import Runs, StoredRun

MERGED = "merge"


class Shards(msgspec.Struct, frozen=True):
    """The shards' runs to merge, in any order; `names` say how to name each to people (a folder,
    an artifact), one per run."""

    runs: tuple[StoredRun, ...]
    names: tuple[str, ...] = ()

    def name(self, run: StoredRun) -> str:
        given = self.names[self.runs.index(run)] if len(self.names) == len(self.runs) else str(run.folder)
        shard = run.file.spec.shard.text
        return f"shard {shard} ({given})" if shard else given

    def ordered(self) -> tuple[StoredRun, ...]:
        """The runs by shard, 1 to n; ConfigurationError unless they are exactly the n shards of
        one run, alike but for their shard."""
        if not self.runs:
            raise ConfigurationError(MERGED, "there is no shard to merge")
        for run in self.runs:
            if not run.file.spec.shard.count:
                raise ConfigurationError(
                    MERGED, f"{self.name(run)} is not a shard: it was played without `shard`"
                )
        first = self.runs[0]
        count = first.file.spec.shard.count
        for run in self.runs:
            if run.file.spec.shard.count != count:
                raise ConfigurationError(
                    MERGED,
                    f"{self.name(run)} is one of {run.file.spec.shard.count} shards, "
                    f"{self.name(first)} one of {count}",
                )
        by_index: dict[int, StoredRun] = {}
        for run in self.runs:
            index = run.file.spec.shard.index
            if index in by_index:
                raise ConfigurationError(
                    MERGED, f"{self.name(by_index[index])} and {self.name(run)} are the same shard"
                )
            by_index[index] = run
        missing = [k for k in range(1, count + 1) if k not in by_index]
        if missing:
            raise ConfigurationError(
                MERGED, f"shard {missing[0]}/{count} is missing ({len(by_index)} of {count} shards given)"
            )
        ordered = tuple(by_index[k] for k in range(1, count + 1))
        for run in ordered[1:]:
            self.alike(ordered[0], run)
        return ordered

    def alike(self, first: StoredRun, other: StoredRun) -> None:
        """ConfigurationError naming the first difference of the two shards' specs but their shard."""
        mine, theirs = self.comparable(first.file.spec), self.comparable(other.file.spec)
        for key in sorted(set(mine) | set(theirs)):
            if mine.get(key) != theirs.get(key):
                raise ConfigurationError(
                    MERGED,
                    f"{self.name(other)} differs from {self.name(first)} in {key}: "
                    f"{self.shown(theirs.get(key))} there, {self.shown(mine.get(key))} here",
                )
        before = [(s.name, s.fingerprint) for s in first.file.spec.shard.scenarios]
        after = [(s.name, s.fingerprint) for s in other.file.spec.shard.scenarios]
        if before != after:
            names = dict(before)
            changed = next(
                (name for name, print_ in after if names.get(name, print_) != print_),
                None,
            )
            detail = (
                f"scenario {changed!r} differs"
                if changed
                else f"{len(after)} scenarios there, {len(before)} here"
                if len(after) != len(before)
                else "the scenarios differ or are in another order"
            )
            raise ConfigurationError(
                MERGED,
                f"{self.name(other)} was played with other scenarios than {self.name(first)}: {detail}",
            )

    def comparable(self, spec: RunSpec) -> dict[str, object]:
        """The spec as flat `field` / `field.sub` values, without its scenarios and shard (and the
        other shards' scenarios among those it left out)."""
        flat: dict[str, object] = {"left_out": self.left_out(spec)}
        built = msgspec.to_builtins(spec)
        for key, value in built.items():
            if key in ("scenarios", "shard", "left_out"):
                continue
            if isinstance(value, dict):
                flat.update({f"{key}.{sub}": inner for sub, inner in value.items()})
            else:
                flat[key] = value
        return flat

    def left_out(self, spec: RunSpec) -> list[str]:
        """The scenarios the whole run leaves out (by `match`), not counting other shards'."""
        whole = {entry.name for entry in spec.shard.scenarios}
        return [name for name in spec.left_out if name not in whole]

    def shown(self, value: object) -> str:
        return "(none)" if value is None else repr(value)

    def merged(self, folder: Path) -> StoredRun:
        """Write the merged run into `folder` (absent or empty) and read it back."""
        if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            raise ConfigurationError(str(folder), "exists and is not empty: a merge writes a new run folder")
        ordered = self.ordered()
        first = ordered[0].file
        # each shard's own entries: a staged shard's carry the baseline tally it decided against
        played = {entry.name: entry for run in ordered for entry in run.file.spec.scenarios}
        whole = tuple(played.get(entry.name, entry) for entry in first.spec.shard.scenarios)
        position = {entry.name: number for number, entry in enumerate(whole)}
        kept: dict[tuple[str, int], tuple[Outcome, str]] = {}
        parts: list[MergedShard] = []
        for run in ordered:
            own = {entry.name for entry in run.file.spec.scenarios}
            count = 0
            for outcome in run.outcomes():
                key = (outcome.scenario, outcome.index)
                if outcome.scenario not in own:
                    raise ConfigurationError(
                        MERGED,
                        f"{self.name(run)} holds attempts of scenario {outcome.scenario!r}, not its own",
                    )
                if key in kept:
                    raise ConfigurationError(
                        MERGED,
                        f"{kept[key][1]} and {self.name(run)} both hold attempt {outcome.index} "
                        f"of scenario {outcome.scenario!r}",
                    )
                kept[key] = (outcome, self.name(run))
                count += 1
            parts.append(
                MergedShard(
                    shard=run.file.spec.shard.text,
                    run=run.folder.name,
                    status=run.file.status,
                    attempts=count,
                )
            )
        unfinished = next((run for run in ordered if run.file.status != "finished"), None)
        provenance = Merged(**msgspec.structs.asdict(first.spec.provenance), shards=tuple(parts))
        spec = msgspec.structs.replace(
            first.spec,
            scenarios=whole,
            shard=Shard(),
            provenance=provenance,
            left_out=tuple(self.left_out(first.spec)),
        )
        ends = [run.file.ended for run in ordered]
        run_file = RunFile(
            format=FORMAT,
            spec=spec,
            status="finished" if unfinished is None else unfinished.file.status,
            started=min(run.file.started for run in ordered),
            ended=max(ends) if all(ends) else "",
            reason=""
            if unfinished is None
            else f"{self.name(unfinished)} is {unfinished.file.status}"
            + (f" ({unfinished.file.reason})" if unfinished.file.reason else ""),
            # every shard calibrated the same judge on the same labels: the first one's stands
            calibration=first.calibration,
        )
        outcomes = sorted(kept.values(), key=lambda pair: (position[pair[0].scenario], pair[0].index))
        journal = RunJournal(folder)
        journal.write(run_file, (outcome for outcome, _ in outcomes))
        self.rejudged(ordered, journal)
        return Runs(folder.parent).one(folder)

    def rejudged(self, ordered: tuple[StoredRun, ...], merged: RunJournal) -> None:
        """The baseline attempts each shard judged again (its slice's), kept in the merged run so
        its comparison needs no new judge call."""
        records = b""
        for run in ordered:
            try:
                data = run.journal.rejudged_file.read_bytes()
            except FileNotFoundError:
                continue
            records += data if data.endswith(b"\n") or not data else data + b"\n"
        if records:
            partial = merged.rejudged_file.with_suffix(".jsonl.partial")
            partial.write_bytes(records)
            partial.replace(merged.rejudged_file)
