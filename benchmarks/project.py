"""What the benchmark plays and reads: BenchProject, a generated project of scenarios (no opening,
max_turns T, plain and graded claims) for `convy run`; StoredRunFolder, a run folder of many
attempts written directly with convy's own records, for reading, summing up, comparing and
rendering."""

from __future__ import annotations

import datetime
import random
from pathlib import Path

import msgspec
import yaml

from convy.play.agent import Call, Usage
from convy.play.outcome import STAMP, ClaimResult, Failed, NoVerdict, Outcome, Turn, Verdict
from convy.project.scenario import Graded, Scenario
from convy.store.runfile import FORMAT, Limits, Provenance, RunFile, RunSpec, ScenarioEntry

TOPICS = (
    "late-delivery",
    "refund",
    "cancel-subscription",
    "change-address",
    "damaged-item",
    "talk-to-human",
    "invoice-copy",
    "password-reset",
    "price-match",
    "warranty",
)
BRIEF = (
    "You are {who}, a customer of an online shop. Your issue is about {topic}: you have already "
    "written once and got no answer, so you are a little impatient, but polite. You know your order "
    "number (44{n:02d}) and the e-mail address you used. You want the matter settled in this "
    "conversation: a concrete next step with a date, not a promise to look into it."
)
PLAIN = (
    "The agent asks for the order number or uses the one given.",
    "The agent never asks for the customer's password or full card number.",
)
GRADED = Graded(
    claim="How clearly did the agent explain what happens next?",
    grades={"clear": True, "vague": False, "missing": False},
)
WHO = ("Dana", "Ravi", "Mei", "Olu", "Sanna", "Tomas", "Ines", "Kwame", "Lena", "Yusuf")


class BenchProject:
    """A project folder with `scenarios` scenario files, each played for `turns` turns."""

    def __init__(self, folder: Path, scenarios: int, turns: int) -> None:
        self.folder = folder
        self._scenarios = scenarios
        self._turns = turns

    def scenario(self, number: int) -> Scenario:
        topic = TOPICS[number % len(TOPICS)]
        return Scenario(
            name=f"s{number:03d}-{topic}",
            user=BRIEF.format(who=WHO[number % len(WHO)], topic=topic.replace("-", " "), n=number),
            claims=(*PLAIN, GRADED),
            max_turns=self._turns,
            tags=("bench", topic),
        )

    def write(self) -> BenchProject:
        folder = self.folder / "scenarios"
        folder.mkdir(parents=True, exist_ok=True)
        for number in range(self._scenarios):
            scenario = self.scenario(number)
            document = {
                "name": scenario.name,
                "user": scenario.user,
                "max_turns": scenario.max_turns,
                "tags": list(scenario.tags),
                "claims": [*PLAIN, {"claim": GRADED.claim, "grades": dict(GRADED.grades)}],
            }
            (folder / f"{scenario.name}.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
        return self


class StoredRunFolder:
    """A finished run folder of `scenarios` × `repeat` attempts of three turns, written as convy
    writes it (run.json, attempts.jsonl); `drop` lowers every third scenario's chance to hold, so a
    comparison of two such folders has regressions to show."""

    def __init__(self, folder: Path, scenarios: int, repeat: int, seed: int, drop: float = 0.0) -> None:
        self.folder = folder
        self._scenarios = scenarios
        self._repeat = repeat
        self._seed = seed
        self._drop = drop

    def write(self) -> StoredRunFolder:
        project = BenchProject(self.folder, self._scenarios, 3)
        scenarios = [project.scenario(number) for number in range(self._scenarios)]
        moment = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC).strftime(STAMP)
        spec = RunSpec(
            agent="bench",
            scenarios=tuple(
                ScenarioEntry(
                    name=s.name,
                    fingerprint=s.fingerprint(),
                    file=f"scenarios/{s.name}.yaml",
                    line=1,
                    claim_lines=(6, 7, 8),
                )
                for s in scenarios
            ),
            repeat=self._repeat,
            user_model="bench",
            judge_model="bench",
            limits=Limits(concurrency=8, max_turns=3),
            provenance=Provenance(repository="example/shop", sha="0" * 40, ref="refs/heads/main"),
        )
        self.folder.mkdir(parents=True, exist_ok=True)
        run = RunFile(format=FORMAT, spec=spec, status="finished", started=moment, ended=moment)
        (self.folder / "run.json").write_bytes(msgspec.json.format(msgspec.json.encode(run)))
        chance = random.Random(self._seed)
        encoder = msgspec.json.Encoder()
        with (self.folder / "attempts.jsonl").open("wb") as stream:
            for number, scenario in enumerate(scenarios):
                holds = 0.9 - (self._drop if number % 3 == 0 else 0.0) - 0.02 * (number % 5)
                lines = [
                    encoder.encode(self.outcome(scenario, index, holds, chance, moment))
                    for index in range(self._repeat)
                ]
                stream.write(b"\n".join(lines) + b"\n")
        return self

    def outcome(
        self, scenario: Scenario, index: int, holds: float, chance: random.Random, moment: str
    ) -> Outcome:
        turns = tuple(
            Turn(
                user=f"Message {turn + 1}: I ordered the blue headphones three weeks ago "
                f"(order 44{index % 100:02d}) and the tracking page has said 'in transit' since the ninth.",
                agent="Thank you for your patience. The parcel was held at the regional depot; I can send a "
                "replacement today with express delivery or refund the full amount within five working days.",
                seconds=round(chance.uniform(0.4, 3.0), 4),
                usage=Usage(input=400 + 150 * turn, output=chance.randint(40, 120)),
                steps=(Call(name="lookup_order", arguments='{"order": 4411}', result='{"status": "held"}'),),
            )
            for turn in range(3)
        )
        roll = chance.random()
        decision: Verdict | Failed | NoVerdict
        if roll < 0.02:
            decision = Failed(reason="http_500", detail="HTTP 500 from http://agent.example/chat")
        elif roll < 0.04:
            decision = NoVerdict(
                reason="model_failure", detail="judge: the judge gave 2 decisions for 3 claims"
            )
        else:
            passed = chance.random() < holds
            grade = "clear" if passed else "vague"
            claims = (
                ClaimResult(claim=PLAIN[0], passed=True, reason="The agent used the order number given."),
                ClaimResult(claim=PLAIN[1], passed=True, reason="No secret was asked for."),
                ClaimResult(
                    claim=GRADED.claim, passed=passed, grade=grade, reason="The next step was stated."
                ),
            )
            decision = Verdict(holds=passed, claims=claims)
        return Outcome(
            scenario=scenario.name,
            index=index,
            fingerprint=scenario.fingerprint(),
            turns=turns,
            seconds=round(sum(t.seconds for t in turns) + chance.uniform(0.5, 2.0), 4),
            decision=decision,
            ended="max_turns" if not isinstance(decision, Failed) else "agent_failed",
            judge_usage=Usage(input=900, output=80),
            user_usage=Usage(input=1200, output=150),
            started=moment,
        )
