"""The gate's false-alarm rate and power with fixed repeats, adaptive repeats in two rounds (decision
17) and staged repeats (decision 28), by simulation (no network):
`python benchmarks/adaptive.py [--pairs N] [--others N] [--seed S] [--quick] [--part main|others|stress]`.

Each pair is a baseline run and a current run of 20 scenarios, built as convy's own records
(Outcome lines summed by Summed), compared by Compared and gated by Gate with the defaults
(max-drop 0.05, alpha 0.05): the real gate, not a copy of it. Pass rates come from Beta(0.4, 0.4)
(the hard model). Under "no change" the current run has the baseline's rates; under "regression" 5
scenarios chosen at random are broken: a rate p > 0.5 drops to min(p, 0.05), else to 0.2·p. The
baseline plays 3 attempts of each scenario. The current run plays `repeat` attempts of each; in two
rounds, the scenarios the decision-17 rule finds unclear then get attempts up to `max-repeat`; by
stages, the run's own schedule (convy.conduct.stages.Staging: 1 attempt, stop where every attempt so far
in both runs held or every one missed, the rest to `repeat`, the unclear ones to `max-repeat`)
decides which attempts are played. False alarm = share of no-change pairs the gate fails; power =
share of regression pairs it fails, with its 95% interval; attempts = mean attempts per scenario of
the current run.

A worst-case table follows (`--others N` pairs per cell, half of `--pairs` by default): the
no-change false alarm at the gate for each of FIXED (20 scenarios at fixed pass rates, 18
configurations), and its maximum. Then a stress table for the staged design: the no-change
false-alarm rate of the stratified test alone (max-drop 0) with every scenario at one rate, for 20
and 100 scenarios — where a rule that looks at which run the passes fell in, tested naively, goes
far over alpha.

`--floor` prints the floor's table alone (it ends the full run too, not the quick one): no change,
the gate with min-pass-rate 0.5 and the defaults otherwise, for the models of FLOOR_MODELS (10
scenarios at p = 0.9 and 10 at p = 0.3 first). For each design: the share of pairs the floor fails,
the printed drop (its mean, and the share over 5 points), the printed pass rate's mean, how often its
interval holds the true rate (the mean of the scenarios' rates), and the attempts per scenario
(decision 27: extra attempts go to the unclear, low scenarios, so a rate pooled over attempts falls
with no change at all).

`--grid` prints the honest pass rate's grid alone (it ends the full run too): no change, for each
configuration of GRID (10 to 50 scenarios, one rate or a mixture) and for fixed repeat 3 and staged
1 → 3 → 9, the printed pass rate's bias against the true rate (the mean of the scenarios' rates), how
often its 95% interval holds the true rate, how often min-pass-rate 0.5 fails, pass^3's bias against
the mean of the rates cubed, and the attempts per scenario (docs/gate.md); and staged play as a run
with a floor plays it, stages from `repeat` (3 → 9, decision 28), whose floor column is the one a
run with min-pass-rate gets."""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable, Iterator

from convy.compare.adaptive import Unclear
from convy.compare.comparison import Compared, Comparison
from convy.compare.gate import Gate
from convy.compare.statistics import Rate, Share, Tally
from convy.compare.summary import Summary, Summed
from convy.conduct.stages import Staging
from convy.play.outcome import ClaimResult, Outcome, Verdict
from convy.store.runfile import RunFile, RunSpec, ScenarioEntry

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
FIXED: tuple[tuple[str, tuple[float, ...]], ...] = (
    *((f"20 at {rate}", (rate,) * 20) for rate in (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)),
    ("10 at 0.9, 10 at 0.3", (0.9,) * 10 + (0.3,) * 10),
    ("10 at 0.95, 10 at 0.05", (0.95,) * 10 + (0.05,) * 10),
    ("10 at 0.7, 10 at 0.5", (0.7,) * 10 + (0.5,) * 10),
    ("5 each at 0.2, 0.4, 0.6, 0.8", (0.2,) * 5 + (0.4,) * 5 + (0.6,) * 5 + (0.8,) * 5),
    ("10 at 0.99, 10 at 0.6", (0.99,) * 10 + (0.6,) * 10),
    ("15 at 0.9, 5 at 0.1", (0.9,) * 15 + (0.1,) * 5),
    ("20 from 0.025 to 0.975", tuple((i + 0.5) / 20 for i in range(20))),
)
"""Fixed pass-rate configurations for the worst-case false alarm: every scenario at one rate, and
mixtures of easy, hard and middling scenarios."""
CLAIM = (ClaimResult(claim="The agent helps.", passed=True),)
MISSED = (ClaimResult(claim="The agent helps.", passed=False),)


class Design:
    """How the current run spends attempts: `repeat` each (`kind` fixed); then, in two rounds (decision
    17), up to `max_repeat` for the scenarios unclear after the first; or by stages (decision 28)."""

    def __init__(self, name: str, repeat: int, max_repeat: int, kind: str = "fixed") -> None:
        self.name = name
        self.repeat = repeat
        self.max_repeat = max_repeat
        self.kind = kind


FIXED_3 = Design("fixed repeat 3", 3, 3)
ROUNDS = Design("two rounds 3 → 6 (decision 17)", 3, 6, "rounds")
STAGED = Design("staged 1 → 3 → 9 (decision 28)", 3, 9, "staged")
FROM_REPEAT = Design("staged with a floor, 3 → 9", 3, 9, "from repeat")
"""Staged play as a run with a floor (min-pass-rate) plays it: stages from `repeat` (decision 28)."""
"""Stages that start at `repeat` (no stop after one attempt): measured beside the grid only."""
DESIGNS = (
    FIXED_3,
    Design("fixed repeat 4", 4, 4),
    ROUNDS,
    Design("staged 1 → 3 → 6", 3, 6, "staged"),
    STAGED,
)


class Pair:
    """One simulated baseline and current run of the same scenarios."""

    def __init__(self, rng: random.Random, rates: list[float], now_rates: list[float]) -> None:
        self.rng = rng
        self.rates = rates
        self.now_rates = now_rates
        self.names = [f"s{i}" for i in range(len(rates))]

    def outcomes(self, name: str, rate: float, start: int, count: int) -> Iterator[Outcome]:
        for index in range(start, start + count):
            yield self.outcome(name, rate, index)

    def outcome(self, name: str, rate: float, index: int) -> Outcome:
        holds = self.rng.random() < rate
        return Outcome(
            scenario=name,
            index=index,
            fingerprint="f",
            turns=(),
            seconds=1.0,
            decision=Verdict(holds=holds, claims=CLAIM if holds else MISSED),
        )

    def spec(self, repeat: int, max_repeat: int, floored: bool = False) -> RunSpec:
        return RunSpec(
            agent="a",
            scenarios=tuple(ScenarioEntry(name=name, fingerprint="f") for name in self.names),
            repeat=repeat,
            max_repeat=max_repeat,
            floored=floored,
        )

    def summary(self, outcomes: list[Outcome], spec: RunSpec, started: str) -> Summary:
        file = RunFile(format=2, spec=spec, status="finished", started=started)
        return Summed(file, "run", outcomes).summary()

    def gated(self, design: Design, gate: Gate, chained: bool = False) -> tuple[bool, int]:
        """Whether the gate fails the current run, and the attempts it played."""
        comparison, played = self.compared(design, gate, chained)
        return gate.decision(comparison).verdict == "fail", played

    def compared(self, design: Design, gate: Gate, chained: bool = False) -> tuple[Comparison, int]:
        """The current run compared with the baseline, and the attempts it played. The baseline
        plays 3 attempts of each scenario; `chained`, it plays by stages 1 → 3 → 9 itself, against
        an older run of 3 attempts each at the baseline's rates."""
        older = self.summary(
            [
                o
                for name, rate in zip(self.names, self.rates, strict=True)
                for o in self.outcomes(name, rate, 0, 3)
            ],
            self.spec(3, 3),
            "older",
        )
        baseline = self.played(STAGED, self.rates, older, "baseline")[0] if chained else older
        now, played = self.played(design, self.now_rates, baseline, "now")
        return Compared(now, baseline, alpha=gate.alpha).comparison(), played

    def played(
        self, design: Design, rates: list[float], baseline: Summary, started: str
    ) -> tuple[Summary, int]:
        """A run of `design` at `rates` against `baseline`, and the attempts it played."""
        spec = self.spec(design.repeat, design.max_repeat, floored=design.kind == "from repeat")
        rate = dict(zip(self.names, rates, strict=True))
        if design.kind in ("staged", "from repeat"):
            spec = Staging(spec).decided(baseline)
            now: list[Outcome] = []
            while due := Staging(spec).due(now):
                now.extend(self.outcome(name, rate[name], index) for name, index in due)
        else:
            now = [o for name in self.names for o in self.outcomes(name, rate[name], 0, design.repeat)]
        if design.kind == "rounds":
            for name in self.rounds(baseline, now):
                now.extend(self.outcomes(name, rate[name], design.repeat, design.max_repeat - design.repeat))
        return self.summary(now, spec, started), len(now)

    def rounds(self, baseline: Summary, first: list[Outcome]) -> list[str]:
        """The scenarios that get a further round in the two-round design (decision 17): those whose
        first round, with the baseline's, at least one attempt held and at most half did."""
        tallies: dict[str, Tally] = {}
        for outcome in first:
            held = int(isinstance(outcome.decision, Verdict) and outcome.decision.holds)
            tally = tallies.get(outcome.scenario, Tally(held=0, judged=0))
            tallies[outcome.scenario] = tally.plus(Tally(held=held, judged=1))
        before = {s.name: s.tally for s in baseline.scenarios}
        return [name for name in self.names if Unclear().wanted(tallies[name], before[name])]


def interval(share: float, count: int) -> str:
    """A share's 95% interval (Wilson), as [low–high]."""
    z = 1.959964
    centre = (share + z * z / (2 * count)) / (1 + z * z / count)
    half = z * math.sqrt(share * (1 - share) / count + z * z / (4 * count * count)) / (1 + z * z / count)
    return f"[{centre - half:.3f}–{centre + half:.3f}]"


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

    def stressed(
        self, scenarios: int, rate: float, pairs: int, design: Design, chained: bool = False
    ) -> float:
        """No-change false-alarm rate of the stratified test alone (no max-drop) for `design` with
        every scenario at `rate` (`chained`: against a staged baseline)."""
        rng = random.Random(self.seed + scenarios * 1000 + int(rate * 100))
        test_only = Gate(max_drop=0.0)
        failed = 0
        for _ in range(pairs):
            rates = [rate] * scenarios
            failed += Pair(rng, rates, rates).gated(design, test_only, chained)[0]
        return failed / pairs

    def fixed(self, place: int, design: Design, pairs: int) -> tuple[float, float]:
        """No-change false alarm at the gate with the rates of FIXED[place]: the share of pairs it
        fails on the drop (the comparison's rule), and on any rule (nothing-held too)."""
        rng = random.Random(self.seed * 11 + place)
        rates = list(FIXED[place][1])
        dropped = failed = 0
        for _ in range(pairs):
            comparison, _ = Pair(rng, rates, rates).compared(design, self.gate)
            decision = self.gate.decision(comparison)
            dropped += decision.on_drop
            failed += decision.verdict == "fail"
        return dropped / pairs, failed / pairs


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
            for design in (FIXED_3, ROUNDS, STAGED, FROM_REPEAT):
                table.row(*self.row(place, design))


GRID: tuple[tuple[str, tuple[float, ...]], ...] = (
    *((f"20 at {rate}", (rate,) * 20) for rate in (0.05, 0.2, 0.4, 0.6, 0.8, 0.95)),
    ("50 at 0.6", (0.6,) * 50),
    ("10 at 0.6", (0.6,) * 10),
    ("5 each at 0.2, 0.4, 0.6, 0.8", (0.2,) * 5 + (0.4,) * 5 + (0.6,) * 5 + (0.8,) * 5),
    ("10 at 0.9, 10 at 0.3", (0.9,) * 10 + (0.3,) * 10),
    ("5 at 0.95, 5 at 0.2", (0.95,) * 5 + (0.2,) * 5),
    ("15 at 0.9, 5 at 0.1", (0.9,) * 15 + (0.1,) * 5),
    ("25 at 0.95, 25 at 0.1", (0.95,) * 25 + (0.1,) * 25),
    ("20 from 0.025 to 0.975", tuple((i + 0.5) / 20 for i in range(20))),
)
"""The honest pass rate's grid (decision 28, docs/gate.md): every scenario at one rate, 10 to 50
scenarios, and mixtures of easy and hard ones. The true pass rate is the mean of the rates."""


class Grid:
    """The printed pass rate under no change, for each of GRID: its bias, how often its 95% interval
    holds the true rate, how often the floor (min-pass-rate 0.5) fails, pass^k's bias, and the
    attempts per scenario — for fixed repeat 3 and staged 1 → 3 → 9."""

    def __init__(self, pairs: int, seed: int, designs: tuple[Design, ...] = (FIXED_3, STAGED)) -> None:
        self.pairs = pairs
        self.seed = seed
        self.gate = Gate(min_pass_rate=FLOOR)
        self.designs = designs

    def row(self, place: int, design: Design) -> tuple[str, ...]:
        model, rates = GRID[place]
        rng = random.Random(self.seed * 17 + place)
        truth = sum(rates) / len(rates)
        reliable = sum(rate**3 for rate in rates) / len(rates)
        floored = covered = attempts = 0
        shown: list[float] = []
        passes: list[float] = []
        for _ in range(self.pairs):
            comparison, played = Pair(rng, list(rates), list(rates)).compared(design, self.gate)
            floored += self.gate.decision(comparison).rule == "min-pass-rate"
            rate = comparison.now.rate
            if isinstance(rate, Rate):
                shown.append(rate.value)
                covered += rate.low <= truth <= rate.high
            pass_k = comparison.now.pass_k
            if isinstance(pass_k, Share):
                passes.append(pass_k.value)
            attempts += played
        return (
            model,
            design.name,
            f"{truth * 100:.1f}%",
            self.bias(shown, truth),
            f"{covered / self.pairs:.3f}",
            f"{floored / self.pairs:.3f}",
            self.bias(passes, reliable),
            f"{attempts / (self.pairs * len(rates)):.2f}",
        )

    def bias(self, values: list[float], truth: float) -> str:
        """The values' mean less the truth, in points, ± the mean's standard error."""
        if not values:
            return "unknown"
        mean = sum(values) / len(values)
        error = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1) / len(values))
        return f"{(mean - truth) * 100:+.2f} ± {error * 100:.2f}"

    def table(self, out: Callable[[str], object]) -> None:
        out(
            f"\nNo change, baseline 3 attempts each, {self.pairs} pairs per configuration and design: the "
            f"printed pass rate's bias (points, ± its simulation error), how often its 95% interval "
            f"holds the true rate, how often min-pass-rate {FLOOR} fails, pass^3's bias (points, ± its "
            "simulation error) against the mean of the rates cubed\n\n"
        )
        table = Table(
            (
                "pass rates",
                "design",
                "true rate",
                "bias",
                "interval holds the true rate",
                "floor fails",
                "pass^3 bias",
                "attempts",
            ),
            out,
        )
        for place in range(len(GRID)):
            for design in self.designs:
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


def main_table(simulation: Simulation, pairs: int, out: Callable[[str], object]) -> None:
    """Each design's false alarm, power and attempts on the hard model."""
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
    for design in DESIGNS:
        alarm, spent_null = simulation.measured(design, regression=False)
        power, spent = simulation.measured(design, regression=True)
        table.row(
            design.name,
            f"{alarm:.3f}",
            f"{spent_null:.2f}",
            f"{power:.3f} {interval(power, pairs)}",
            f"{spent:.2f}",
        )


def other_tables(
    simulation: Simulation, few: int, quick: bool, seed: int, out: Callable[[str], object]
) -> None:
    """The worst case over FIXED; unless `quick`, the stress table and the floor's."""
    configurations = FIXED if not quick else FIXED[:: len(FIXED) // 4]
    out(
        f"\nNo change at fixed pass rates, 20 scenarios: the share of pairs the gate fails on the drop "
        f"(on any rule, nothing-held too), {few} pairs each\n\n"
    )
    worst = Table(("pass rates", *(design.name for design in (FIXED_3, ROUNDS, STAGED))), out)
    highest = [(0.0, 0.0)] * 3
    for place in range(len(FIXED)):
        if FIXED[place] not in configurations:
            continue
        cells = [simulation.fixed(place, design, few) for design in (FIXED_3, ROUNDS, STAGED)]
        highest = [(max(a[0], b[0]), max(a[1], b[1])) for a, b in zip(highest, cells, strict=True)]
        worst.row(FIXED[place][0], *(f"{drop:.3f} ({fail:.3f})" for drop, fail in cells))
    worst.row(
        f"**worst of {len(configurations)}**", *(f"**{drop:.3f}** ({fail:.3f})" for drop, fail in highest)
    )
    if not quick:
        stress_table(simulation, few, out)
        Floor(few, seed).table(out)
        Grid(few, seed).table(out)


def stress_table(simulation: Simulation, few: int, out: Callable[[str], object]) -> None:
    """The staged design's no-change false alarm of the stratified test alone, every scenario at
    one rate, against a baseline of 3 attempts each and against a staged one."""
    out("\nNo change, every scenario at one rate: false alarm of the stratified test alone (max-drop 0),\n")
    out(f"{few} pairs each\n\n")
    rates = ("rate 0.1", "rate 0.2", "rate 0.3", "rate 0.5", "rate 0.8")
    stress = Table(("design", "scenarios", *rates), out)
    for chained in (False, True):
        for scenarios in (20, 100):
            cells = [
                f"{simulation.stressed(scenarios, rate, few, STAGED, chained):.3f}"
                for rate in (0.1, 0.2, 0.3, 0.5, 0.8)
            ]
            against = "a staged baseline" if chained else "a baseline of 3 each"
            stress.row(f"{STAGED.name} against {against}", str(scenarios), *cells)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4000, help="pairs per model and design")
    parser.add_argument(
        "--others", type=int, default=0, help="pairs per cell of the other tables (default: half of --pairs)"
    )
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument(
        "--quick", action="store_true", help="200 pairs, 4 fixed configurations, no stress table"
    )
    parser.add_argument("--floor", action="store_true", help="the floor's table only")
    parser.add_argument(
        "--grid", action="store_true", help="the honest pass rate's grid only (--pairs per configuration)"
    )
    parser.add_argument(
        "--part",
        choices=("all", "main", "others", "stress"),
        default="all",
        help="the main table, the others, or the stress tables alone",
    )
    arguments = parser.parse_args()
    pairs = 200 if arguments.quick else arguments.pairs
    simulation = Simulation(pairs, arguments.seed)
    began = time.monotonic()
    out = sys.stdout.write
    if arguments.floor:
        Floor(pairs, arguments.seed).table(out)
        out(f"\n{time.monotonic() - began:.0f} s\n")
        return 0
    if arguments.grid:
        designs = (FIXED_3, STAGED, FROM_REPEAT)
        Grid(pairs, arguments.seed, designs).table(out)
        out(f"\n{time.monotonic() - began:.0f} s\n")
        return 0
    if arguments.part in ("all", "main"):
        out(
            f"{pairs} pairs per model and design, {SCENARIOS} scenarios, baseline 3 attempts each, "
            f"seed {arguments.seed}\n\n"
        )
        main_table(simulation, pairs, out)
    if arguments.part == "stress":
        stress_table(simulation, arguments.others or pairs // 2, out)
    elif arguments.part != "main":
        other_tables(simulation, arguments.others or pairs // 2, arguments.quick, arguments.seed, out)
    out(f"\n{time.monotonic() - began:.0f} s\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
