"""`convy redteam --keep RUN`: every attempt of a run whose attack succeeded (did not hold: the agent
gave way) written as a scripted scenario — the attacker's exact messages as its `turns`, the same
claims, checks and attack, and `source: {run, index}` — so that what worked once is tested on every
run after, with no attacker model."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import yaml

from convy.conduct.redteam import AttackText
from convy.play.outcome import Failed, Outcome, Verdict
from convy.project.document import Declaration
from convy.project.scenario import Check, Scenario
from convy.store.runs import StoredRun


class Won(msgspec.Struct, frozen=True):
    """One attempt whose attack succeeded, and the scenario it played as the project declares it."""

    outcome: Outcome
    scenario: Scenario

    def scenario_text(self, run: str) -> AttackText:
        scenario, outcome = self.scenario, self.outcome
        name = f"{scenario.name}-kept-{run}-{outcome.index + 1}"
        attack = scenario.attack
        body: dict[str, object] = {
            "name": name,
            "attack": {"goal": attack.goal, "category": attack.category, "strategy": attack.strategy},
            "turns": [turn.user for turn in outcome.turns],
            "max_turns": len(outcome.turns),
        }
        if scenario.claims:
            body["claims"] = [msgspec.to_builtins(claim) for claim in scenario.claims]
        if scenario.checks:
            body["checks"] = [self.check(check) for check in scenario.checks]
        if scenario.tags:
            body["tags"] = list(scenario.tags)
        body["source"] = {"run": run, "index": outcome.index}
        head = (
            f"# Kept by convy redteam --keep: attempt {outcome.index + 1} of `{scenario.name}`"
            f" in run {run},\n"
            "# where the attack succeeded. It replays the attacker's messages; no user model is asked.\n"
        )
        text = head + yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=1000)
        return AttackText(name=f"{name}.yaml", text=text)

    def check(self, check: Check) -> dict[str, object]:
        """A check as its file declares it: its one key, and `in: last` when it looks at the last turn."""
        value: object = msgspec.to_builtins(getattr(check, check.kind))
        written: dict[str, object] = {check.kind: value}
        if check.within == "last":
            written["in"] = "last"
        return written


class KeptAttacks(msgspec.Struct, frozen=True):
    """The attacks of `run` that succeeded, set against the project's `declarations` (their claims,
    checks and attack as declared now). A scenario kept before (`source: {run}`) is not kept again."""

    run: StoredRun
    declarations: tuple[Declaration, ...]

    def won(self) -> Iterator[Won]:
        declared = {d.scenario.name: d.scenario for d in self.declarations}
        for outcome in self.run.outcomes():
            scenario = declared.get(outcome.scenario)
            if scenario is None or not scenario.attack or scenario.source.run:
                continue
            if self.succeeded(outcome):
                yield Won(outcome=outcome, scenario=scenario)

    def succeeded(self, outcome: Outcome) -> bool:
        """Whether the attempt did not hold with a dialogue to replay: a verdict against the agent,
        or the agent failing once it had been reached."""
        match outcome.decision:
            case Verdict(holds=holds):
                return not holds and bool(outcome.turns)
            case Failed(reason=reason):
                return reason != "not_delivered" and bool(outcome.turns)
            case _:
                return False

    def drafts(self) -> tuple[AttackText, ...]:
        """One scripted scenario per attack that succeeded, in the run's order."""
        return tuple(won.scenario_text(self.run.name) for won in self.won())

    def missing(self) -> tuple[str, ...]:
        """The run's attack scenarios the project no longer declares (their wins cannot be kept)."""
        declared = {d.scenario.name for d in self.declarations}
        return tuple(
            entry.name
            for entry in self.run.file.spec.scenarios
            if entry.category and entry.name not in declared
        )
