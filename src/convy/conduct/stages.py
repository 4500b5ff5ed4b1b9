"""Which attempts a run with staged repeats plays next (decision 28): worked out from its spec (its
stages and each scenario's recorded baseline tally) and the attempts its folder holds, so a resumed
run continues where the rule left off."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from convy.compare.staged import EMPTY, Stages
from convy.compare.statistics import Tally
from convy.compare.summary import Summary
from convy.play.outcome import Outcome
from convy.store.attempts import Undelivered
from convy.store.runfile import Against, RunSpec


class Staging(msgspec.Struct, frozen=True):
    """A run's spec, read as a staged schedule."""

    spec: RunSpec

    @property
    def design(self) -> Stages:
        return Stages(ends=self.spec.stages, repeat=self.spec.repeat)

    def decided(self, baseline: Summary) -> RunSpec:
        """The spec with its stages and, for each scenario compared with `baseline` (the same
        fingerprint there, judged there), the baseline's tally as the comparison reads it: what
        each stage's decision is taken against. The others play `repeat` attempts, plainly."""
        before = {s.name: s for s in baseline.scenarios}
        entries = []
        for entry in self.spec.scenarios:
            old = before.get(entry.name)
            tally = baseline.read(old) if old is not None and old.fingerprint == entry.fingerprint else EMPTY
            against = Against(held=tally.held, judged=tally.judged) if tally.judged else None
            entries.append(msgspec.structs.replace(entry, against=against))
        return msgspec.structs.replace(
            self.spec,
            scenarios=tuple(entries),
            stages=Stages.of(self.spec.repeat, self.spec.max_repeat, self.spec.floored).ends,
            baseline=baseline.key(),
        )

    def due(self, outcomes: Iterable[Outcome]) -> tuple[tuple[str, int], ...]:
        """The attempts (scenario, index) to play next, in declaration order: of each scenario, the
        missing attempts of the first stage it has not finished, once the rule went on after every
        stage before; a scenario without a recorded baseline tally, its missing first `repeat`."""
        done: dict[tuple[str, int], Outcome] = {}
        for outcome in outcomes:
            if not Undelivered(outcome).undelivered:
                done[(outcome.scenario, outcome.index)] = outcome
        design = self.design
        due: list[tuple[str, int]] = []
        for entry in self.spec.scenarios:
            if entry.against is None or not design.on:
                due.extend((entry.name, i) for i in range(self.spec.repeat) if (entry.name, i) not in done)
                continue
            against = Tally(held=entry.against.held, judged=entry.against.judged)
            so_far = EMPTY
            for stage in range(len(design.ends)):
                span = design.span(stage)
                missing = [(entry.name, i) for i in span if (entry.name, i) not in done]
                if missing:
                    due.extend(missing)
                    break
                for index in span:
                    so_far = so_far.plus(Tally.of(done[(entry.name, index)].decision))
                if not design.goes_on(stage, so_far, against):
                    break
        return tuple(due)

    def left(self, outcomes: Iterable[Outcome]) -> int:
        """The most attempts the run may still play, those due now included: of each scenario with a
        recorded baseline tally, up to the end of the last stage the rule may still reach; of the
        others, their missing first `repeat`. Before the stages are decided (no stages recorded
        yet, max-repeat above repeat), every scenario may get `max-repeat`."""
        done: dict[tuple[str, int], Outcome] = {}
        for outcome in outcomes:
            if not Undelivered(outcome).undelivered:
                done[(outcome.scenario, outcome.index)] = outcome
        design = self.design
        undecided = not design.on
        most = max(self.spec.repeat, self.spec.max_repeat) if undecided else self.spec.repeat
        left = 0
        for entry in self.spec.scenarios:
            reach = most
            if not undecided and entry.against is not None:
                against = Tally(held=entry.against.held, judged=entry.against.judged)
                reach = design.ends[-1]
                so_far = EMPTY
                for stage in range(len(design.ends)):
                    span = design.span(stage)
                    if any((entry.name, i) not in done for i in span):
                        break
                    for index in span:
                        so_far = so_far.plus(Tally.of(done[(entry.name, index)].decision))
                    if not design.goes_on(stage, so_far, against):
                        reach = design.ends[stage]
                        break
            left += sum(1 for i in range(reach) if (entry.name, i) not in done)
        return left
