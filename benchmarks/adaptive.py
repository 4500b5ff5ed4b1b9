"""The gate's false-alarm rate and power with fixed and adaptive repeats, by simulation (no network):
`python benchmarks/adaptive.py [--pairs N] [--seed S] [--quick]`.

Each pair is a baseline run and a current run of 20 scenarios, built as convy's own records
(Outcome lines summed by Summed), compared by Compared and gated by Gate with the defaults
(max-drop 0.05, alpha 0.05): the real gate, not a copy of it. Pass rates come from Beta(0.4, 0.4).
Under "no change" the current run has the baseline's rates; under "regression" 5 scenarios chosen at
random are broken: a rate p > 0.5 drops to min(p, 0.05), else to 0.2·p. The baseline plays 3
attempts of each scenario. The current run plays `repeat` attempts of each; with adaptive repeats
the scenarios the rule (convy.compare.adaptive.Allocation) finds unclear then get attempts up to
`max-repeat`. False alarm = share of no-change pairs the gate fails; power = share of regression
pairs it fails; attempts = mean attempts per scenario of the current run.

A stress table follows: the no-change false-alarm rate of adaptive 3/6 with every scenario at one
rate, for 20 and 100 scenarios — where a rule that looks at which run the passes fell in, tested
naively, goes far over alpha.

`--floor` prints the floor's table alone (it ends the full run too, not the quick one): no change,
the gate with min-pass-rate 0.5 and the defaults otherwise, for the models of FLOOR_MODELS (10
scenarios at p = 0.9 and 10 at p = 0.3 first). For fixed repeat 3 and adaptive 3/6: the share of
pairs the floor fails, the printed drop (its mean, and the share over 5 points), the printed pass
rate's mean, how often its interval holds the true rate (the mean of the scenarios' rates), and the
attempts per scenario (decision 27: extra attempts go to the unclear, low scenarios, so a rate
pooled over attempts falls with no change at all)."""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Iterator

from convy.compare.adaptive import Allocation
from convy.compare.comparison import Compared, Comparison
from convy.compare.gate import Gate
from convy.compare.statistics import Rate, Tally
from convy.compare.summary import Summary, Summed
from convy.play.outcome import ClaimResult, Outcome, Verdict
from convy.store.journal import RunFile, RunSpec, ScenarioEntry

SCENARIOS = 20
BROKEN = 5
FLOOR_MODELS: tuple[tuple[str, tuple[float, ...]], ...] = (
    ("10 at 0.9, 10 at 0.3 (60%)", (0.9,) * 10 + (0.3,) * 10),
    ("20 at 0.6 (60%)", (0.6,) * 20),
    ("20 at 0.45 (45%)", (0.45,) * 20),
)
"""The floor's models: half the scenarios easy and half hard (the issue's), every scenario at a
middling rate (where a scenario's own share is most biased by which got more attempts), and every
scenario just under the floor (where the floor failing is right). The true pass rate is the mean."""
FLOOR = 0.5
CLAIM = (ClaimResult(claim="The agent helps.", passed=True),)
MISSED = (ClaimResult(claim="The agent helps.", passed=False),)


class Design:
    """How the current run spends attempts: `repeat` each, then up to `max_repeat` when unclear."""

    def __init__(self, name: str, repeat: int, max_repeat: int) -> None:
        self.name = name
        self.repeat = repeat
        self.max_repeat = max_repeat


class Pair:
    """One simulated baseline and current run of the same scenarios."""

    def __init__(self, rng: random.Random, rates: list[float], now_rates: list[float]) -> None:
        self.rng = rng
        self.rates = rates
        self.now_rates = now_rates
        self.names = [f"s{i}" for i in range(len(rates))]

    def outcomes(self, name: str, rate: float, start: int, count: int) -> Iterator[Outcome]:
        for index in range(start, start + count):
            holds = self.rng.random() < rate
            yield Outcome(
                scenario=name,
                index=index,
                fingerprint="f",
                turns=(),
                seconds=1.0,
                decision=Verdict(holds=holds, claims=CLAIM if holds else MISSED),
            )

    def summary(self, outcomes: list[Outcome], repeat: int, max_repeat: int) -> Summary:
        spec = RunSpec(
            agent="a",
            scenarios=tuple(ScenarioEntry(name=name, fingerprint="f") for name in self.names),
            repeat=repeat,
            max_repeat=max_repeat,
        )
        file = RunFile(format=2, spec=spec, status="finished", started="")
        return Summed(file, "run", outcomes).summary()

    def gated(self, design: Design, gate: Gate) -> tuple[bool, int]:
        """Whether the gate fails the current run, and the attempts it played."""
        comparison, played = self.compared(design, gate)
        return gate.decision(comparison).verdict == "fail", played

    def compared(self, design: Design, gate: Gate) -> tuple[Comparison, int]:
        """The current run compared with the baseline, and the attempts it played."""
        baseline = self.summary(
            [
                o
                for name, rate in zip(self.names, self.rates, strict=True)
                for o in self.outcomes(name, rate, 0, 3)
            ],
            3,
            3,
        )
        now = [
            o
            for name, rate in zip(self.names, self.now_rates, strict=True)
            for o in self.outcomes(name, rate, 0, design.repeat)
        ]
        if design.max_repeat > design.repeat:
            first: dict[str, Tally] = {}
            for outcome in now:
                held = int(isinstance(outcome.decision, Verdict) and outcome.decision.holds)
                first[outcome.scenario] = first.get(outcome.scenario, Tally(held=0, judged=0)).plus(
                    Tally(held=held, judged=1)
                )
            chosen = set(Allocation(baseline).chosen(first, dict.fromkeys(self.names, "f")))
            for name, rate in zip(self.names, self.now_rates, strict=True):
                if name in chosen:
                    now.extend(self.outcomes(name, rate, design.repeat, design.max_repeat - design.repeat))
        summary = self.summary(now, design.repeat, design.max_repeat)
        return Compared(summary, baseline, alpha=gate.alpha).comparison(), len(now)


class Simulation:
    """Pairs drawn from one model, gated under each design."""

    def __init__(self, pairs: int, seed: int) -> None:
        self.pairs = pairs
        self.seed = seed
        self.gate = Gate()

    def rates(self, rng: random.Random, count: int) -> list[float]:
        return [rng.betavariate(0.4, 0.4) for _ in range(count)]

    def broken(self, rng: random.Random, rates: list[float]) -> list[float]:
        now = list(rates)
        for index in rng.sample(range(len(rates)), BROKEN):
            rate = rates[index]
            now[index] = min(rate, 0.05) if rate > 0.5 else 0.2 * rate
        return now

    def measured(self, design: Design, regression: bool) -> tuple[float, float]:
        """(share of pairs the gate failed, mean attempts per scenario of the current run)."""
        rng = random.Random(self.seed * 2 + regression)
        failed = attempts = 0
        for _ in range(self.pairs):
            rates = self.rates(rng, SCENARIOS)
            pair = Pair(rng, rates, self.broken(rng, rates) if regression else rates)
            fails, played = pair.gated(design, self.gate)
            failed += fails
            attempts += played
        return failed / self.pairs, attempts / (self.pairs * SCENARIOS)

    def stressed(self, scenarios: int, rate: float, pairs: int) -> float:
        """No-change false-alarm rate of the stratified test alone (no max-drop) for adaptive 3/6
        with every scenario at `rate`."""
        rng = random.Random(self.seed + scenarios * 1000 + int(rate * 100))
        test_only = Gate(max_drop=0.0)
        failed = 0
        for _ in range(pairs):
            rates = [rate] * scenarios
            failed += Pair(rng, rates, rates).gated(Design("adaptive", 3, 6), test_only)[0]
        return failed / pairs


class Floor:
    """The floor and the printed drop under no change, for each of FLOOR_MODELS."""

    def __init__(self, pairs: int, seed: int) -> None:
        self.pairs = pairs
        self.seed = seed
        self.gate = Gate(min_pass_rate=FLOOR)

    def row(self, place: int, design: Design) -> tuple[str, ...]:
        """The cells of one model (FLOOR_MODELS[place]) and design: floor failures, mean drop, drops
        over 5 points, mean pass rate, how often its interval holds the true rate, attempts per
        scenario."""
        model, rates = FLOOR_MODELS[place]
        rng = random.Random(self.seed * 7 + place)
        truth = sum(rates) / len(rates)
        floored = over = covered = attempts = 0
        drops: list[float] = []
        shown: list[float] = []
        for _ in range(self.pairs):
            comparison, played = Pair(rng, list(rates), list(rates)).compared(design, self.gate)
            floored += self.gate.decision(comparison).rule == "min-pass-rate"
            drop = comparison.drop or 0.0
            drops.append(drop)
            over += drop > 0.05
            rate = comparison.now.rate
            if isinstance(rate, Rate):
                shown.append(rate.value)
                covered += rate.low <= truth <= rate.high
            attempts += played
        return (
            model,
            design.name,
            f"{floored / self.pairs:.3f}",
            f"{sum(drops) / len(drops) * 100:+.2f}",
            f"{over / self.pairs:.3f}",
            f"{sum(shown) / len(shown) * 100:.1f}%",
            f"{covered / self.pairs:.3f}",
            f"{attempts / (self.pairs * len(rates)):.2f}",
        )

    def table(self, out: Callable[[str], object]) -> None:
        out(
            f"\nNo change, min-pass-rate {FLOOR}, baseline 3 attempts each, {self.pairs} pairs per model "
            "and design\n\n"
        )
        table = Table(
            (
                "model",
                "design",
                "floor fails",
                "mean printed drop (points)",
                "drop over 5 points",
                "mean pass rate",
                "interval holds the true rate",
                "attempts",
            ),
            out,
        )
        for place in range(len(FLOOR_MODELS)):
            for design in (Design("fixed repeat 3", 3, 3), Design("adaptive repeat 3 / max-repeat 6", 3, 6)):
                table.row(*self.row(place, design))


class Table:
    """Prints rows as a markdown table."""

    def __init__(self, head: tuple[str, ...], write: Callable[[str], object]) -> None:
        self.write = write
        write("| " + " | ".join(head) + " |\n")
        write("|" + "---|" * len(head) + "\n")

    def row(self, *cells: str) -> None:
        self.write("| " + " | ".join(cells) + " |\n")
        sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4000, help="pairs per model and design")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--quick", action="store_true", help="200 pairs, no stress table")
    parser.add_argument("--floor", action="store_true", help="the floor's table only")
    arguments = parser.parse_args()
    pairs = 200 if arguments.quick else arguments.pairs
    simulation = Simulation(pairs, arguments.seed)
    began = time.monotonic()
    out = sys.stdout.write
    if arguments.floor:
        Floor(pairs, arguments.seed).table(out)
        out(f"\n{time.monotonic() - began:.0f} s\n")
        return 0
    out(
        f"{pairs} pairs per model and design, {SCENARIOS} scenarios, baseline 3 attempts each, "
        f"seed {arguments.seed}\n\n"
    )
    table = Table(
        (
            "design",
            "false alarm (no change)",
            "attempts (no change)",
            "power (5 broken)",
            "attempts (5 broken)",
        ),
        out,
    )
    for design in (
        Design("fixed repeat 3", 3, 3),
        Design("fixed repeat 4", 4, 4),
        Design("adaptive repeat 3 / max-repeat 6", 3, 6),
    ):
        alarm, spent_null = simulation.measured(design, regression=False)
        power, spent = simulation.measured(design, regression=True)
        table.row(design.name, f"{alarm:.3f}", f"{spent_null:.2f}", f"{power:.3f}", f"{spent:.2f}")
    if not arguments.quick:
        out(
            "\nNo change, every scenario at one rate: false alarm of the stratified test alone"
            " (max-drop 0),\n"
        )
        out(f"adaptive repeat 3 / max-repeat 6, {pairs // 2} pairs each\n\n")
        stress = Table(("scenarios", "rate 0.1", "rate 0.2", "rate 0.3", "rate 0.5", "rate 0.8"), out)
        for scenarios in (20, 100):
            cells = [
                f"{simulation.stressed(scenarios, rate, pairs // 2):.3f}"
                for rate in (0.1, 0.2, 0.3, 0.5, 0.8)
            ]
            stress.row(str(scenarios), *cells)
        Floor(pairs, arguments.seed).table(out)
    out(f"\n{time.monotonic() - began:.0f} s\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
