"""A baseline run as the current run re-judged it: the scenarios whose dialogue is unchanged but
whose claims, checks or judge changed are read with the re-judged attempts the current run recorded
(rejudged.jsonl), so they are compared (`rejudged`) instead of left out (`changed`)."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from convy.compare.summary import Summed
from convy.play.outcome import Outcome
from convy.store.journal import Rejudged
from convy.store.runfile import RunSpec, ScenarioEntry
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
        names = self.names()
        if not names:
            return Summed.of(self.baseline)
        spec = self.baseline.file.spec
        entries = tuple(
            self.entry(entry, today[entry.name]) if entry.name in names else entry for entry in spec.scenarios
        )
        file = msgspec.structs.replace(
            self.baseline.file, spec=msgspec.structs.replace(spec, scenarios=entries)
        )
        return Summed(file, str(self.baseline.folder), self.outcomes(), self.baseline.torn(), names)

    def outcomes(self) -> Iterator[Outcome]:
        """The baseline's attempts as the comparison uses them, streamed: its own, but the
        re-judged ones in place of its attempts of the scenarios re-judged."""
        names = self.names()
        yield from (o for o in self.baseline.outcomes() if o.scenario not in names)
        yield from (record.outcome for record in self.records if record.outcome.scenario in names)

    def names(self) -> frozenset[str]:
        """The scenarios re-judged: those of the records that this run still has."""
        today = {entry.name for entry in self.now.scenarios}
        return frozenset(
            record.outcome.scenario for record in self.records if record.outcome.scenario in today
        )

    def entry(self, old: ScenarioEntry, now: ScenarioEntry) -> ScenarioEntry:
        """The baseline's scenario as re-judged: today's fingerprints, its own place."""
        return msgspec.structs.replace(old, fingerprint=now.fingerprint, criteria=now.criteria)
