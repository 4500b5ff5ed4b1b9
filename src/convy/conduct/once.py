"""What a run need not pay for again: the verdicts its attempts may reuse (the baseline's, where a
scenario's claims, checks and judge model are unchanged, and the run folder's own) and, with
`replay: user`, the baseline attempts whose simulated user its attempts replay (where a scenario's
dialogue is unchanged)."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from convy.compare.comparison import NoBaseline
from convy.play.outcome import Outcome
from convy.play.replay import Pairing, Pairs
from convy.play.reuse import Verdicts
from convy.project.scenario import Scenario
from convy.store.runfile import RunSpec
from convy.store.runs import StoredRun


class Once(msgspec.Struct, frozen=True, kw_only=True):
    """A run (its name, its spec, its scenarios as declared now) and its baseline, if any."""

    run: str
    spec: RunSpec
    scenarios: tuple[Scenario, ...]
    baseline: StoredRun | NoBaseline

    def verdicts(self, earlier: Iterable[Outcome]) -> Verdicts:
        """The run's lookup of reusable verdicts: the baseline's attempts of scenarios whose claims
        and checks (criteria) and judge (its model by name, its votes and panel) are unchanged, then
        `earlier`, the attempts the run folder holds already (a resumed run)."""
        verdicts = Verdicts(self.run)
        match self.baseline:
            case StoredRun() as before:
                if self.spec.judge_model and before.file.spec.judged_by == self.spec.judged_by:
                    criteria = {scenario.name: scenario.criteria() for scenario in self.scenarios}
                    kept = {
                        entry.name
                        for entry in before.file.spec.scenarios
                        if entry.criteria and criteria.get(entry.name) == entry.criteria
                    }
                    for outcome in before.outcomes():
                        if outcome.scenario in kept:
                            verdicts.learn(before.name, outcome)
            case NoBaseline():
                pass
        for outcome in earlier:
            verdicts.learn(self.run, outcome)
        return verdicts

    def pairs(self) -> Pairs:
        """With `replay: user` and a baseline, its attempts of scenarios whose dialogue (brief,
        opening or turns, max turns) is unchanged, by scenario and index; else none."""
        match self.baseline:
            case StoredRun() as before if self.spec.replay == "user":
                dialogues = {scenario.name: scenario.dialogue() for scenario in self.scenarios}
                kept = {
                    entry.name
                    for entry in before.file.spec.scenarios
                    if entry.dialogue and dialogues.get(entry.name) == entry.dialogue
                }
                return Pairs(
                    {
                        (outcome.scenario, outcome.index): Pairing.of(outcome)
                        for outcome in before.outcomes()
                        if outcome.scenario in kept
                    }
                )
            case _:
                return Pairs()
