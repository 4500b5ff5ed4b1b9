"""run.json's records: what a run plays (the agent, its scenarios, the repeat, the models by name,
its limits, its provenance, merged from shards or not, and its shard), the attempts a run may hold,
and run.json itself — the format, the spec, the status and what ended the run — with its format
alone, read first.

The journal (journal.py) writes and reads them, and hands them on."""

from __future__ import annotations

import asyncio
from typing import Literal

import msgspec

from convy.data import Data
from convy.store.judgerecord import NOT_MEASURED, JudgeRecord

FORMAT = 2
"""The run folder format this code writes; a newer one is refused, an older one converted.
Format 2 splits each scenario's fingerprint into its dialogue part and its criteria part; a format-1
folder reads with both unknown (""), so its scenarios are never re-judged."""
Status = Literal["running", "finished", "interrupted", "stopped"]


class Provenance(Data, frozen=True, kw_only=True):
    """Where the run came from: repository, commit, ref, workflow run, pull request ("" unknown)."""

    repository: str = ""
    sha: str = ""
    ref: str = ""
    workflow_run: str = ""
    pull_request: int = 0


class MergedShard(Data, frozen=True, kw_only=True):
    """One shard a merged run was made of: which (`k/n`), its own run id, how it ended."""

    shard: str
    run: str
    status: str
    attempts: int


class Merged(Provenance, frozen=True, kw_only=True):
    """The provenance of a run merged from shards: the shards' own (one workflow run), and the
    shards. Written as Provenance plus `shards`; read back as Provenance."""

    shards: tuple[MergedShard, ...] = ()


class Against(Data, frozen=True, kw_only=True):
    """The baseline's attempts of a scenario that a staged run decided against: `held` of `judged`
    (decision 28)."""

    held: int
    judged: int


class ScenarioEntry(Data, frozen=True, kw_only=True):
    """A scenario as the run recorded it: its name, fingerprint and where it was declared."""

    name: str
    fingerprint: str
    file: str = ""
    line: int = 0
    claim_lines: tuple[int, ...] = ()
    category: str = ""
    """The catalogue's category of an attack scenario (`excessive-agency`); "" not an attack."""
    dialogue: str = ""
    """The fingerprint of what decides how the dialogue plays (brief, opening or turns, max
    turns); "" unknown (a format-1 folder)."""
    criteria: str = ""
    """The fingerprint of what decides how a dialogue is judged (claims, checks); "" unknown."""
    source: str = ""
    """Where the scenario was drafted from, as its `source` key says it; "" written by hand."""
    against: Against | None = None
    """In a staged run, the baseline's tally the scenario's stages were decided against (None: it
    played `repeat` attempts, plainly)."""


class Limits(Data, frozen=True, kw_only=True):
    """How the run was played: conversations at once, turns, time limits, request rates."""

    concurrency: int = 8
    max_turns: int = 8
    turn_timeout: float = 120.0
    patience: float = 300.0
    model_rpm: int = 0
    agent_rpm: int = 0
    budget: float = 0.0
    """The most USD the run could spend before no further attempt started (0: no budget)."""


class Shard(Data, frozen=True, kw_only=True, omit_defaults=True):
    """Which shard of a run this one is — shard `index` of `count` (1-based) of a run of `scenarios`
    (all of them, in declaration order) — or, all fields empty, no shard: the whole run."""

    index: int = 0
    count: int = 0
    scenarios: tuple[ScenarioEntry, ...] = ()

    @property
    def text(self) -> str:
        return f"{self.index}/{self.count}" if self.count else ""


class RunSpec(Data, frozen=True, kw_only=True):
    """What a run plays: agent, scenarios, repeat, models by name only, limits, provenance; a
    shard's run plays its slice of the scenarios and says which shard it is."""

    agent: str
    scenarios: tuple[ScenarioEntry, ...]
    repeat: int
    max_repeat: int = 0
    """With a baseline, the most attempts a scenario whose comparison was unclear got (0: off)."""
    user_model: str = ""
    judge_model: str = ""
    judge_votes: str = "1"
    """`judge-votes` as the run's judge voted: `1`, an odd number, or `failing`."""
    judge_panel: tuple[str, ...] = ()
    """The models that voted with the judge (`judge-panel`), by name."""
    vote_temperature: float = 1.0
    """The temperature of each judge's votes after its first (it matters only when it votes)."""
    limits: Limits = Limits()
    provenance: Provenance = Provenance()
    left_out: tuple[str, ...] = ()
    """The project's scenarios this run does not play (left out by `match`, or by `shard`: the
    other shards' scenarios): "not played" in a comparison, never "removed"."""
    shard: Shard = Shard()
    replay: Literal["none", "user"] = "none"
    """`user`: the baseline's simulated user was replayed while the agent answered as there."""
    price_library: str = ""
    """The price library the attempts' costs were worked out with, and its version
    (`genai-prices 0.2.3`); "" when no price was looked up there."""
    floored: bool = False
    """The run has a floor (min-pass-rate): its stages start at `repeat` (repeat → max-repeat), so
    the rate the floor reads is no noisier than a fixed repeat's (decision 28)."""
    stages: tuple[int, ...] = ()
    """Where each stage of a staged run ends (1, repeat, max-repeat), recorded once it decided
    against a baseline; empty: no stages (decision 28)."""
    baseline: str = ""
    """The baseline run (its key) a staged run decided against."""

    @property
    def judged_by(self) -> tuple[str, str, tuple[str, ...], float]:
        """The judge as far as its decisions depend on it: its model, its votes, its panel, and the
        temperature of later votes when there are any (0 when there are none)."""
        voting = self.judge_votes != "1" or bool(self.judge_panel)
        return (
            self.judge_model,
            self.judge_votes,
            self.judge_panel,
            self.vote_temperature if voting else 0.0,
        )

    def expected(self) -> tuple[tuple[str, int], ...]:
        """Every (scenario, attempt index) of the run, in declaration order."""
        return tuple((s.name, i) for s in self.scenarios for i in range(self.repeat))

    def roster(self) -> Roster:
        """The attempts this run may hold: its scenarios, each up to `max_repeat` attempts (adaptive
        repeats) or `repeat`, whichever is more."""
        return Roster(names=frozenset(s.name for s in self.scenarios), most=max(self.repeat, self.max_repeat))


class Roster(msgspec.Struct, frozen=True):
    """The attempts a run may hold: the scenarios named in `names`, attempt indices 0 to `most` − 1.
    Empty (`most` 0): not known (no readable run.json), and every attempt line may belong."""

    names: frozenset[str] = frozenset()
    most: int = 0

    def stray(self, scenario: str, index: int) -> str:
        """Why an attempt line for (`scenario`, `index`) is not one of the run's ("" when it is)."""
        if self.most <= 0:
            return ""
        if scenario not in self.names:
            return f"scenario {scenario!r} is not one of the run's"
        if not 0 <= index < self.most:
            return f"{scenario!r} has no attempt index {index} (the run's are 0 to {self.most - 1})"
        return ""


class RunFile(Data, frozen=True, kw_only=True):
    """run.json."""

    format: int
    spec: RunSpec
    status: Status
    started: str
    ended: str = ""
    reason: str = ""
    """Why the run is interrupted (the exception's name) or stopped (fail-fast's cause)."""
    agent_version: str = ""
    """The agent's build as agent-version-url reported it before playing (empty: not asked)."""
    calibration: JudgeRecord | msgspec.UnsetType = msgspec.UNSET
    """The judge measured against the project's labels before the first attempt (absent: no
    labels; read it as `judge`)."""

    @property
    def judge(self) -> JudgeRecord:
        """The run's calibration, NOT_MEASURED when it has none."""
        return NOT_MEASURED if isinstance(self.calibration, msgspec.UnsetType) else self.calibration


class Header(msgspec.Struct, frozen=True):
    """The part of run.json read before anything else: its format."""

    format: int = 0


class Interruption(msgspec.Struct, frozen=True):
    """What interrupted a run, as run.json records it: the signal's name (`SIGTERM`, `SIGINT`), which
    the cancellation carries, else the error's kind (the first one's, for a group of errors)."""

    error: BaseException

    def reason(self) -> str:
        match self.error:
            case asyncio.CancelledError(args=(str(name), *_)) if name.startswith("SIG"):
                return name
            case KeyboardInterrupt():
                return "SIGINT"
            case BaseExceptionGroup(exceptions=(first, *_)):
                return Interruption(first).reason()
            case _:
                return type(self.error).__name__
