"""Rejudgement: a baseline run as the current run re-judged it — the scenarios whose dialogue is
unchanged but whose claims, checks or judge changed read with the re-judged attempts the current
run recorded (rejudged.jsonl), so they are compared (`rejudged`) instead of left out (`changed`)."""

from __future__ import annotations

import msgspec

from convy.compare.summary import Summed
from convy.store.journal import Rejudged, RunSpec, ScenarioEntry
from convy.store.runs import StoredRun


class Rejudgement(msgspec.Struct, frozen=True):
    """`baseline` with `records` (the current run's re-judged attempts of it) in place of its own
    attempts of those scenarios; `now` is the current run's spec, whose fingerprints they take."""

    baseline: StoredRun
    records: tuple[Rejudged, ...]
    now: RunSpec

    def summed(self) -> Summed:
        """The baseline to sum up: re-judged scenarios with today's fingerprint and attempts."""
        today = {entry.name: entry for entry in self.now.scenarios}
        names = frozenset(
            record.outcome.scenario for record in self.records if record.outcome.scenario in today
        )
        if not names:
            return Summed.of(self.baseline)
        spec = self.baseline.file.spec
        entries = tuple(
            self.entry(entry, today[entry.name]) if entry.name in names else entry for entry in spec.scenarios
        )
        file = msgspec.structs.replace(
            self.baseline.file, spec=msgspec.structs.replace(spec, scenarios=entries)
        )
        kept = (o for o in self.baseline.outcomes() if o.scenario not in names)
        again = tuple(record.outcome for record in self.records if record.outcome.scenario in names)
        return Summed(file, str(self.baseline.folder), (*kept, *again), self.baseline.torn(), names)

    def entry(self, old: ScenarioEntry, now: ScenarioEntry) -> ScenarioEntry:
        """The baseline's scenario as re-judged: today's fingerprints, its own place."""
        return msgspec.structs.replace(old, fingerprint=now.fingerprint, criteria=now.criteria)
