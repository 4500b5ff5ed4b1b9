"""One run summed up into view records, in one pass over its attempts: the pass rate with its Wilson
interval (a mean over scenarios when their numbers of judged attempts differ), the attempts failed
and without verdict by reason, pass^k per scenario, and how each time and token figure spread.

Unknown stays unknown, never 0. What adds the figures up is in summing.py, the parts of a summary in
parts.py."""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

import msgspec

from convy.compare.attacks import Attacked, Attacks
from convy.compare.corrected import MIN_LABELS, NOT_CORRECTED, CorrectedRate, Correction, JudgedAttempts
from convy.compare.money import Dollars, Money
from convy.compare.parts import Party, Reason, Rejudging, Savings, ScenarioSummary, Spread
from convy.compare.staged import Stages
from convy.compare.staged_rate import StagedRate
from convy.compare.statistics import Averaged, Rate, Share, Tally, Unknown
from convy.compare.summing import ScenarioCount, Summing
from convy.data import Data
from convy.play.budget import BUDGET
from convy.play.outcome import Outcome
from convy.store.judgerecord import NOT_MEASURED, JudgeRecord
from convy.store.runfile import RunFile
from convy.store.runs import StoredRun


class Summary(Data, frozen=True, kw_only=True):
    """A run summed up: what the comment, the console, the pages and the gate read."""

    agent: str
    run: str
    folder: str
    status: str
    started: str
    ended: str
    repeat: int
    user_model: str
    judge_model: str
    attempts: int
    expected: int
    tally: Tally
    """Every attempt judged and held, counted: what `nothing-held` and the counts shown read."""
    rate: Rate | Unknown
    """The pass rate: the mean of the scenarios' shares (Averaged), which is tally's held / judged
    when every scenario has the same number judged; under staged play, the mean of each scenario's
    rate estimated given the stages it reached (StagedRate, decision 28)."""
    failed: tuple[Reason, ...]
    no_verdict: tuple[Reason, ...]
    no_verdict_share: Share | Unknown
    scenarios: tuple[ScenarioSummary, ...]
    attempt_seconds: Spread
    turn_seconds: Spread
    turns: Spread
    agent_input_tokens: Spread
    agent_output_tokens: Spread
    user_tokens: Spread
    judge_tokens: Spread
    torn: bool = False
    sha: str = ""
    ref: str = ""
    pull_request: int = 0
    failed_attempts: int = 0
    """Attempts the agent failed: judged, not holding."""
    no_verdict_attempts: int = 0
    """Attempts without a verdict: left out of the pass rate."""
    first_seconds: Spread = Spread()
    """Time to first token of the streamed turns (count 0 when no turn was streamed)."""
    rejudging: Rejudging = Rejudging()
    """For a baseline read with its dialogues re-judged by the current run: what that took."""
    max_repeat: int = 0
    """The most attempts a scenario could get (more than `repeat`: adaptive repeats were on)."""
    pass_k: Share | Unknown = Unknown()
    """The mean over the scenarios of their pass^k (k = repeat), as tau-bench reports it; scenarios
    with fewer than k judged attempts are left out, and with none left it is unknown. Under staged
    play every scenario judged counts, each by an unbiased estimate of its rate to the k-th power."""
    parties: tuple[Party, ...] = ()
    """Whose each attempt that did not hold is, in the order of PARTIES (parties with none left out)."""
    left_out: tuple[str, ...] = ()
    """Scenarios of the project the run did not play (left out by `match` or a shard)."""
    stopped: str = ""
    """Why the run stopped early (fail-fast's cause, or `budget`), empty when it did not."""
    agent_version: str = ""
    """The build of the agent that answered, as agent-version-url reported it (empty: unknown)."""
    cost: Money = Money()
    """What the run's attempts cost in USD (the user's, the judge's and the agent's models)."""
    budget: float = 0.0
    """The budget the run was played with (0: none)."""
    averaged: bool = False
    """The scenarios have different numbers of judged attempts, so the pass rate is their shares'
    mean, not the pooled tally's share."""
    saved: Savings = Savings()
    """What reused verdicts and replayed turns spared the run."""
    stages: tuple[int, ...] = ()
    """Where the stages of a staged run end (1, repeat, max-repeat); empty: none (decision 28)."""
    decided: str = ""
    """The baseline run (its key) a staged run's stages were decided against."""
    calibration: JudgeRecord = NOT_MEASURED
    """The judge measured against the project's labels before the first attempt (run.json)."""
    corrected: CorrectedRate = NOT_CORRECTED
    """The pass rate corrected for the judge's errors (corrected.py): shown, never gated on."""
    attacks: tuple[Attacked, ...] = ()
    """The attack scenarios' attempts by category: how many succeeded of those played."""

    def read(self, scenario: ScenarioSummary) -> Tally:
        """One of its scenarios as a comparison reads it as the baseline, and a staged run decides
        against: every judged attempt, but only the first round of a run that played adaptive
        repeats in two rounds (decision 17: its further attempts were chosen against an older run)."""
        rounds = self.max_repeat > self.repeat and not self.stages
        return scenario.first if rounds else scenario.tally

    def key(self) -> str:
        """What names the run wherever its folder is unpacked (StoredRun.key): agent and start."""
        return f"{self.agent}@{self.started}"

    def exact_rate(self) -> Fraction | None:
        """The pass rate as an exact fraction of the counts (what the floor compares); None when
        nothing was judged. Under staged play, each scenario's rate estimated given its stages."""
        if self.stages:
            return StagedRate.of(self.stages, self.repeat, self.scenarios).share()
        return Averaged(tallies=tuple(s.tally for s in self.scenarios)).share()

    @property
    def over_budget(self) -> bool:
        """Whether the budget stopped the run."""
        return self.stopped == BUDGET

    def stop(self) -> str:
        """Why the run stopped early, as one line: `budget of $1.00 reached after $0.97`, or
        `fail-fast: <its cause>`; "" when it did not."""
        if self.over_budget:
            return f"budget of {Dollars(self.budget).text()} reached after {self.cost.text()}"
        return f"fail-fast: {self.stopped}" if self.stopped else ""


class Summed(msgspec.Struct, frozen=True):
    """A run's header and its attempts, to be summed up."""

    file: RunFile
    folder: str
    outcomes: Iterable[Outcome]
    torn: bool = False
    rejudged: frozenset[str] = frozenset()
    """The scenarios whose outcomes are re-judged ones (a baseline as the current run judged it)."""

    @classmethod
    def of(cls, run: StoredRun) -> Summed:
        """A stored run's header and its attempts, streamed once when summed."""
        return cls(run.file, str(run.folder), run.outcomes(), run.torn())

    def expected(self, scenarios: tuple[ScenarioSummary, ...]) -> int:
        """The attempts the run calls for: `repeat` of each scenario, or in a staged run, as far as
        its stages' rule goes (decision 28)."""
        spec = self.file.spec
        design = Stages(ends=spec.stages, repeat=spec.repeat)
        return sum(
            spec.repeat if s.against is None or not design.on else design.reach(s.stages, s.against)
            for s in scenarios
        )

    def pass_k(self, scenarios: tuple[ScenarioSummary, ...]) -> Share | Unknown:
        """The mean of the scenarios' pass^k, those with fewer than k judged left out (a run played
        without stages)."""
        reliable: list[float] = []
        for scenario in scenarios:
            match scenario.pass_k:
                case Share(value=value):
                    reliable.append(value)
                case Unknown():
                    pass
        return Share(value=min(1.0, math.fsum(reliable) / len(reliable))) if reliable else Unknown()

    def summary(self, min_labels: int = MIN_LABELS) -> Summary:
        """The run summed up; the pass rate corrected for the judge shown from `min_labels`
        labelled decisions."""
        spec = self.file.spec
        summing = Summing(repeat=spec.repeat, ends=spec.stages)
        judged = JudgedAttempts()
        judged_again = 0
        tokens: list[int] = []
        for outcome in self.outcomes:
            summing.add(outcome)
            judged.add(outcome)
            if outcome.scenario in self.rejudged:
                judged_again += 1
                usage = outcome.judge_usage
                if usage is not None and (usage.input is not None or usage.output is not None):
                    tokens.append((usage.input or 0) + (usage.output or 0))
        if self.file.judge.measured:
            summing.costs.spent(self.file.judge.cost)
        scenarios = tuple(
            msgspec.structs.replace(summary, rejudged=True) if summary.name in self.rejudged else summary
            for summary in (
                summing.scenarios.get(entry.name, ScenarioCount()).summary(entry, spec.repeat)
                for entry in spec.scenarios
            )
        )
        again = Rejudging(
            scenarios=sum(1 for s in scenarios if s.rejudged),
            attempts=judged_again,
            judge_tokens=sum(tokens) if tokens else None,
        )
        averaged = Averaged(tallies=tuple(s.tally for s in scenarios))
        tally = averaged.pooled()
        rate, pass_k = averaged.rate(), self.pass_k(scenarios)
        if spec.stages:
            staged = StagedRate.of(spec.stages, spec.repeat, scenarios)
            rate, pass_k = staged.rate(), staged.pass_k(spec.repeat)
        attempts = sum(s.attempts for s in scenarios)
        unjudged = sum(s.no_verdict for s in scenarios)
        return Summary(
            agent=spec.agent,
            run=self.folder.rstrip("/").rsplit("/", 1)[-1],
            folder=self.folder,
            status=self.file.status,
            started=self.file.started,
            ended=self.file.ended,
            repeat=spec.repeat,
            max_repeat=max(spec.max_repeat, spec.repeat),
            user_model=spec.user_model,
            judge_model=spec.judge_model,
            attempts=attempts,
            expected=self.expected(scenarios),
            tally=tally,
            rate=rate,
            averaged=not averaged.even(),
            failed=summing.failed.counted(),
            no_verdict=summing.unjudged.counted(),
            no_verdict_share=Share(value=unjudged / attempts) if attempts else Unknown(),
            scenarios=scenarios,
            attempt_seconds=summing.attempt_seconds.spread(),
            turn_seconds=summing.turn_seconds.spread(),
            turns=summing.turns.spread(),
            agent_input_tokens=summing.agent_input.spread(),
            agent_output_tokens=summing.agent_output.spread(),
            user_tokens=summing.user.spread(),
            judge_tokens=summing.judge.spread(),
            torn=self.torn,
            sha=spec.provenance.sha,
            ref=spec.provenance.ref,
            pull_request=spec.provenance.pull_request,
            failed_attempts=sum(s.failed for s in scenarios),
            no_verdict_attempts=unjudged,
            first_seconds=summing.first_seconds.spread(),
            pass_k=pass_k,
            parties=summing.blame.counted(),
            left_out=spec.left_out,
            stopped=self.file.reason if self.file.status == "stopped" else "",
            agent_version=self.file.agent_version,
            rejudging=again,
            saved=summing.spared.savings(),
            cost=summing.costs.money(),
            budget=spec.limits.budget,
            stages=spec.stages,
            decided=spec.baseline,
            calibration=self.file.judge,
            attacks=Attacks(scenarios).counted(),
            corrected=(
                Correction.of(judged, self.file.judge).corrected(min_labels)
                if self.file.judge.measured
                else NOT_CORRECTED
            ),
        )
