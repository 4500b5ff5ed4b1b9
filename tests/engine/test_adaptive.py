"""Adaptive repeats: the rule's scenarios get attempts up to max-repeat (counted at the agent), and
the test that reads such a run is exact — its distribution is the conditional one the design gives,
so the false-alarm rate stays at or under alpha."""

from __future__ import annotations

import itertools
import json
import threading
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from convy.compare.adaptive import Designed, Unclear
from convy.compare.statistics import Table, Tally
from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.command import convy, lines


def sequences(base: int, first: int, extra: int) -> dict[tuple[int, int], dict[int, Fraction]]:
    """By brute force: for every (total held, attempts judged now), the distribution of held now
    given them, under no change at rate 1/3 (any rate gives the same conditional distribution)."""
    rate = Fraction(1, 3)
    found: dict[tuple[int, int], dict[int, Fraction]] = {}
    for outcomes in itertools.product((0, 1), repeat=base + first + extra):
        b = sum(outcomes[:base])
        early = sum(outcomes[base : base + first])
        more = Unclear().unclear(b + early, base + first)
        now = early + (sum(outcomes[base + first :]) if more else 0)
        judged = first + (extra if more else 0)
        if not more and any(outcomes[base + first :]):
            continue  # the extra attempts were never played: count each first round once
        held = b + now
        weight = rate**held * (1 - rate) ** (base + judged - held)
        cell = found.setdefault((held, judged), {})
        cell[now] = cell.get(now, Fraction(0)) + weight
    return found


@pytest.mark.parametrize(("base", "first", "extra"), [(3, 3, 3), (3, 2, 2), (4, 3, 1), (2, 3, 3)])
def test_the_designed_distribution_is_the_conditional_one_of_the_design(
    base: int, first: int, extra: int
) -> None:
    for (held, judged), cell in sequences(base, first, extra).items():
        total = sum(cell.values())
        for now, weight in cell.items():
            early = max(0, now - (judged - first))
            # a first round that the rule found unclear exactly when the run got more attempts
            for first_held in range(early, min(first, now) + 1):
                more = Unclear().unclear(held - now + first_held, base + first)
                if more == (judged > first):
                    break
            else:
                continue
            table = Designed(
                now=Tally(held=now, judged=judged),
                baseline=Tally(held=held - now, judged=base),
                first=Tally(held=first_held, judged=first),
            )
            distribution = table.distribution()
            mass = sum(distribution.weights)
            for value, expected in cell.items():
                index = value - distribution.start
                got = (
                    Fraction(distribution.weights[index], mass)
                    if 0 <= index < len(distribution.weights)
                    else 0
                )
                assert got == expected / total, (base, first, extra, held, judged, value)


def test_one_scenario_under_the_design_is_significant_at_most_alpha_of_the_time() -> None:
    """Exactly, by enumeration, for many rates: P(p-value of a drop < alpha) <= alpha."""
    base, first, extra = 3, 3, 3
    for alpha in (0.05, 0.1, 0.2):
        for rate in (Fraction(k, 20) for k in range(1, 20)):
            rejected = Fraction(0)
            for outcomes in itertools.product((0, 1), repeat=base + first + extra):
                b = sum(outcomes[:base])
                early = sum(outcomes[base : base + first])
                more = Unclear().unclear(b + early, base + first)
                if not more and any(outcomes[base + first :]):
                    continue
                now = early + (sum(outcomes[base + first :]) if more else 0)
                judged = first + (extra if more else 0)
                played = outcomes if more else outcomes[: base + first]
                held = sum(played)
                weight = rate**held * (1 - rate) ** (len(played) - held)
                table = Designed(
                    now=Tally(held=now, judged=judged),
                    baseline=Tally(held=b, judged=base),
                    first=Tally(held=early, judged=first),
                )
                if table.drop().below(alpha):
                    rejected += weight
            assert rejected <= alpha, (alpha, rate, float(rejected))


def test_a_table_the_rule_cannot_have_made_is_fishers_test_as_it_is() -> None:
    plain = Table(now=Tally(held=0, judged=6), baseline=Tally(held=3, judged=3))
    made = Designed(now=plain.now, baseline=plain.baseline, first=Tally(held=0, judged=3))
    stray = Designed(now=plain.now, baseline=Tally(held=0, judged=3), first=Tally(held=0, judged=3))
    assert made.drop().value > plain.drop().value, "the design's test knows the attempts were chosen"
    assert stray.distribution() == Table(now=plain.now, baseline=Tally(held=0, judged=3)).distribution()
    alone = Designed(
        now=Tally(held=1, judged=3), baseline=Tally(held=3, judged=3), first=Tally(held=1, judged=3)
    )
    assert alone.distribution() == Table(now=alone.now, baseline=alone.baseline).distribution()


def project(folder: Path) -> Path:
    (folder / "scenarios").mkdir(parents=True)
    (folder / "scenarios" / "solid.yaml").write_text("turns: [solid]\nclaims: [The agent is solid.]\n")
    (folder / "scenarios" / "lucky.yaml").write_text("turns: [lucky]\nclaims: [The agent is lucky.]\n")
    return folder


class Judge:
    """`solid` always holds; `lucky` holds on its first judging only."""

    def __init__(self) -> None:
        self.lucky = 0
        self.lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> str:
        text = request["messages"][-1]["content"]
        passed = True
        if "lucky" in text:
            with self.lock:
                self.lucky += 1
                passed = self.lucky == 1
        return json.dumps({"decisions": [{"pass": passed, "reason": "so"}]})


def test_scenarios_play_by_stages_up_to_max_repeat_against_a_baseline(tmp_path: Path) -> None:
    """Decision 28: one attempt each; `solid` (all held in both runs) stops there; `lucky` (its
    baseline 1 of 3, missed now) plays to 3, then (1 of 6 held: unclear) to max-repeat."""
    folder = project(tmp_path)
    with AgentServer() as agent, ModelServer(Judge()) as models:
        # numbered answers: every attempt's transcript differs, so each is judged (none reused)
        numbered = f"{agent.url}/numbered"
        common = ("--agent-url", numbered, "--model-url", models.url, "--model-key", "sk-test-key-1")
        first = convy("run", *common, "--judge-model", "j", "--max-repeat", "6", cwd=folder)
        assert first.returncode == 0, first.stderr
        baseline = next((folder / "results" / "agent").iterdir())
        alone = dict(agent.processed)
        second = convy(
            "run", *common, "--judge-model", "j", "--max-repeat", "6", "--baseline", str(baseline), cwd=folder
        )
        after = dict(agent.processed)
    assert alone == {"solid": 3, "lucky": 3}, "without a baseline, max-repeat plays no more"
    assert after == {"solid": 4, "lucky": 9}, "solid stopped after 1 attempt, lucky went on to 6"
    run = next(p for p in (folder / "results" / "agent").iterdir() if p != baseline)
    played = lines(run)
    assert sorted((o["scenario"], o["index"]) for o in played) == [
        *(("lucky", i) for i in range(6)),
        ("solid", 0),
    ]
    spec = json.loads((run / "run.json").read_text())["spec"]
    assert spec["max_repeat"] == 6 and spec["stages"] == [1, 3, 6]
    assert {entry["name"]: entry["against"] for entry in spec["scenarios"]} == {
        "solid": {"held": 3, "judged": 3},
        "lucky": {"held": 1, "judged": 3},
    }
    assert second.returncode == 0, second.stdout + second.stderr
    assert "convy: 2 attempts of 6 to play" in second.stdout
    assert "convy: 2 more attempts where the comparison is unclear" in second.stdout
    assert "convy: 3 more attempts where the comparison is unclear" in second.stdout
    assert "[7/7] " in second.stdout and "[8/" not in second.stdout, "the progress counts every stage"
    # while later stages may add attempts, the line says how many at most: 6 each before the rule
    # decided, then solid's 1 and lucky's 6
    assert "[1/2 (up to 12 attempts)] " in second.stdout and "[3/4 (up to 7 attempts)] " in second.stdout
    assert "[5/7] " in second.stdout, "the last stage adds no more"


def test_a_resumed_staged_run_plays_the_stages_its_folder_says_are_due(tmp_path: Path) -> None:
    """The stages are worked out from the attempts the folder holds and the tallies run.json
    recorded: a run cut in its last stage, resumed without its baseline, plays just what is left."""
    folder = project(tmp_path)
    with AgentServer() as agent, ModelServer(Judge()) as models:
        # numbered answers: every attempt's transcript differs, so each is judged (none reused)
        numbered = f"{agent.url}/numbered"
        common = ("--agent-url", numbered, "--model-url", models.url, "--model-key", "sk-test-key-1")
        assert convy("run", *common, "--judge-model", "j", cwd=folder).returncode == 0
        baseline = next((folder / "results" / "agent").iterdir())
        done = convy(
            "run", *common, "--judge-model", "j", "--max-repeat", "6", "--baseline", str(baseline), cwd=folder
        )
        assert done.returncode == 0, done.stderr
        run = next(p for p in (folder / "results" / "agent").iterdir() if p != baseline)
        kept = [line for line in (run / "attempts.jsonl").read_text().splitlines() if line.strip()]
        cut = [line for line in kept if json.loads(line)["index"] < 4]
        (run / "attempts.jsonl").write_text("\n".join(cut) + "\n")
        record = json.loads((run / "run.json").read_text())
        (run / "run.json").write_text(json.dumps({**record, "status": "interrupted"}))
        before = dict(agent.processed)
        again = convy("resume", str(run), *common, "--judge-model", "j", cwd=folder)
        after = dict(agent.processed)
    assert again.returncode == 0, again.stdout + again.stderr
    assert after["lucky"] - before["lucky"] == 2 and after["solid"] == before["solid"]
    assert sorted((o["scenario"], o["index"]) for o in lines(run)) == [
        *(("lucky", i) for i in range(6)),
        ("solid", 0),
    ]


def test_the_simulation_runs_and_prints_its_table() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "adaptive.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    rows = {
        line.split("|")[1].strip(): line.split("|")[2:-1]
        for line in done.stdout.splitlines()
        if line.startswith(("| fixed", "| two rounds", "| staged"))
    }
    assert len(rows) == 5
    staged = rows["staged 1 → 3 → 9 (decision 28)"]
    assert float(staged[0]) <= 0.05, "false alarm"
    assert float(staged[1]) < 3.5, "attempts per scenario with no change"
    worst = next(line for line in done.stdout.splitlines() if line.startswith("| **worst of"))
    assert all(float(cell.split("**")[1]) <= 0.1 for cell in worst.split("|")[2:-1])


def test_a_run_with_a_floor_starts_its_stages_at_repeat(tmp_path: Path) -> None:
    """Decision 28: with min-pass-rate, each scenario first plays `repeat` attempts (so the rate the
    floor reads is no noisier than a fixed repeat's); `solid` (3 of 3 in both runs) stops there,
    `lucky` (1 of 3 before, 0 of 3 now: unclear) goes on to max-repeat."""
    folder = project(tmp_path)
    with AgentServer() as agent, ModelServer(Judge()) as models:
        numbered = f"{agent.url}/numbered"
        common = ("--agent-url", numbered, "--model-url", models.url, "--model-key", "sk-test-key-1")
        floor = ("--judge-model", "j", "--max-repeat", "6", "--min-pass-rate", "0.1")
        first = convy("run", *common, *floor, cwd=folder)
        assert first.returncode == 0, first.stdout + first.stderr
        baseline = next((folder / "results" / "agent").iterdir())
        second = convy("run", *common, *floor, "--baseline", str(baseline), cwd=folder)
        after = dict(agent.processed)
    assert after == {"solid": 6, "lucky": 9}, "both played repeat first; only lucky went on"
    run = next(p for p in (folder / "results" / "agent").iterdir() if p != baseline)
    spec = json.loads((run / "run.json").read_text())["spec"]
    assert spec["floored"] is True and spec["stages"] == [3, 6]
    assert "convy: 6 attempts of 6 to play" in second.stdout
    assert "convy: 3 more attempts where the comparison is unclear" in second.stdout
    assert second.returncode == 0, second.stdout + second.stderr
