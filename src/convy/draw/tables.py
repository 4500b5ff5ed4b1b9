"""A run's seven tables for use outside convy, each with its rows as records, CSV and JSON Lines;
the row types are in rows.py.

Rows are not domain objects but data for outside (pandas, polars, a spreadsheet). A value the agent,
the user's model or the judge did not give, or one that does not apply to the row, is None: an
empty cell in CSV, `null` in JSON Lines — never 0. In CSV, booleans are `true`/`false`; the header
row is written even when a table has no rows. Rows come in the order attempts.jsonl holds the
attempts (the order they ended); sort by `scenario`, `index` for the order of declaration. Indexes
(`index`, `turn`, `step`) count from 0. `run` is the run's id (its folder's name).

The columns, in this order, are a durable format: a column may be added at the end, renaming or
removing one is a breaking change.

attempts — one row per attempt:
    run, agent, scenario, index, fingerprint,
    decision              verdict | failed | no_verdict
    holds                 true/false; a failed attempt does not hold; None without verdict
    reason                why it failed or has no verdict (http_500, judge_unreadable...); None for a verdict
    turns                 the agent's answers in the attempt
    seconds               the attempt's duration
    agent_input_tokens, agent_output_tokens
                          summed over the turns; None when a turn did not report it, or no turn
    user_input_tokens, user_output_tokens, judge_input_tokens, judge_output_tokens
    started               when the attempt started (UTC, 2026-11-30T18:30:00Z)
    ended                 how the dialogue ended: user_finished, max_turns, agent_failed, ...

turns — one row per turn of every attempt:
    run, scenario, index, turn, user, agent, seconds, input_tokens, output_tokens,
    steps                 how many steps (thoughts, calls) the agent reported in the turn
    first                 seconds to the first piece of a streamed answer; None when not streamed

claims — one row per claim of every attempt with a verdict:
    run, scenario, index, claim,
    pass                  true/false
    grade                 the judge's grade of a graded claim; None for a plain claim
    reason                the judge's one sentence

scenarios — one row per scenario of the run, in declaration order, as the run's summary has it:
    run, scenario, attempts,
    held, judged          attempts that held, attempts judged (a failed attempt is judged)
    pass_rate, low, high  held / judged and its 95% Wilson interval; None when nothing was judged
    pass_k                pass^k with k the run's repeat; None with fewer than k judged
    failed, no_verdict    attempts the agent failed, attempts without verdict
    category              an attack scenario's category in the red-team catalogue; "" otherwise

steps — one row per step the agent reported:
    run, scenario, index, turn, step,
    type                  thought | call
    name, arguments, result
                          a call's; None for a thought (and for arguments or a result not given)
    text                  a thought's; None for a call

usage — three rows per attempt, one per participant:
    run, scenario, index,
    participant           agent | user | judge
    input, output         tokens (the agent's summed over its turns, as in attempts)

failures — one row per attempt that failed or has no verdict:
    run, scenario, index,
    type                  failed | no_verdict
    party                 whose it is: agent | user model | judge | busy | convy
    reason, detail
    status                the HTTP status of the answer that failed; None where there was none
    message               the service's own words (one line, secrets masked); None when it said none
    raw                   an unreadable judge reply as it came (at most 2,000 characters); None otherwise
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

import msgspec

from convy.compare.statistics import Rate, Share, Unknown
from convy.compare.summary import Summary
from convy.compare.summing import Whose
from convy.draw.rows import AttemptRow, ClaimRow, FailureRow, Row, ScenarioRow, StepRow, TurnRow, UsageRow
from convy.play.agent import Call, Thought, Usage
from convy.play.outcome import Failed, NoVerdict, Outcome, Turn, Verdict
from convy.store.atomic import AtomicFile
from convy.store.runs import StoredRun


class ExportTable(msgspec.Struct, frozen=True):
    """One table of a run: its name, the type of its rows (whose fields are its columns), and
    where its rows come from — read afresh each time they are asked for."""

    name: str
    kind: type[Row]
    source: Callable[[], Iterable[Row]]

    def columns(self) -> tuple[str, ...]:
        return tuple(field.encode_name for field in msgspec.structs.fields(self.kind))

    def rows(self) -> Iterator[Row]:
        yield from self.source()

    def records(self) -> Iterator[dict[str, Any]]:
        """Each row as a dict from column to value, in column order; None for a missing value."""
        for row in self.rows():
            record: dict[str, Any] = msgspec.to_builtins(row)
            yield record

    def csv(self, stream: IO[str]) -> None:
        """The table as CSV: the header row, then a line per row; None is an empty cell. Open a
        file for it with newline=""."""
        writer = csv.writer(stream)
        columns = self.columns()
        writer.writerow(columns)
        for record in self.records():
            writer.writerow([self._cell(record[column]) for column in columns])

    def jsonl(self, stream: IO[str]) -> None:
        """The table as JSON Lines: an object per row, every column present, None as null."""
        encoder = msgspec.json.Encoder()
        for row in self.rows():
            stream.write(encoder.encode(row).decode("utf-8") + "\n")

    def write(self, folder: Path) -> None:
        """<name>.csv and <name>.jsonl in `folder`."""
        with AtomicFile(folder / f"{self.name}.csv").opened(newline="") as stream:
            self.csv(stream)
        with AtomicFile(folder / f"{self.name}.jsonl").opened(newline="\n") as stream:
            self.jsonl(stream)

    def _cell(self, value: Any) -> Any:
        match value:
            case None:
                return ""
            case bool():
                return "true" if value else "false"
            case _:
                return value


class AgentTokens(msgspec.Struct, frozen=True):
    """The agent's tokens over an attempt's turns: each side summed, unknown when any turn did not
    report it or there was no turn (as the run's summary counts them)."""

    turns: tuple[Turn, ...]

    def usage(self) -> Usage:
        inputs = [turn.usage.input if turn.usage is not None else None for turn in self.turns]
        outputs = [turn.usage.output if turn.usage is not None else None for turn in self.turns]
        return Usage(input=self._total(inputs), output=self._total(outputs))

    def _total(self, values: list[int | None]) -> int | None:
        known = [value for value in values if value is not None]
        return sum(known) if known and len(known) == len(values) else None


class Tables(msgspec.Struct, frozen=True):
    """A run's seven tables. Each streams the run's attempts from its folder when its rows are
    read, so no table holds the run in memory; the scenarios table is the summary's."""

    run: StoredRun
    summary: Summary

    def all(self) -> tuple[ExportTable, ...]:
        return (
            ExportTable("attempts", AttemptRow, self.attempts),
            ExportTable("turns", TurnRow, self.turns),
            ExportTable("claims", ClaimRow, self.claims),
            ExportTable("scenarios", ScenarioRow, self.scenarios),
            ExportTable("steps", StepRow, self.steps),
            ExportTable("usage", UsageRow, self.usage),
            ExportTable("failures", FailureRow, self.failures),
        )

    def write(self, folder: Path) -> None:
        """<name>.csv and <name>.jsonl of every table in `folder`, made if missing."""
        folder.mkdir(parents=True, exist_ok=True)
        for table in self.all():
            table.write(folder)

    def attempts(self) -> Iterator[AttemptRow]:
        for outcome in self.run.outcomes():
            decided: tuple[Literal["verdict", "failed", "no_verdict"], bool | None, str | None]
            match outcome.decision:
                case Verdict(holds=holds):
                    decided = ("verdict", holds, None)
                case Failed(reason=reason):
                    decided = ("failed", False, reason)
                case NoVerdict(reason=reason):
                    decided = ("no_verdict", None, reason)
            agent, user, judge = (usage for _, usage in self._spent(outcome))
            yield AttemptRow(
                run=self.summary.run,
                agent=self.summary.agent,
                scenario=outcome.scenario,
                index=outcome.index,
                fingerprint=outcome.fingerprint,
                decision=decided[0],
                holds=decided[1],
                reason=decided[2],
                turns=len(outcome.turns),
                seconds=outcome.seconds,
                agent_input_tokens=agent.input,
                agent_output_tokens=agent.output,
                user_input_tokens=user.input,
                user_output_tokens=user.output,
                judge_input_tokens=judge.input,
                judge_output_tokens=judge.output,
                started=outcome.started or None,
                ended=outcome.ended or None,
            )

    def turns(self) -> Iterator[TurnRow]:
        for outcome in self.run.outcomes():
            for number, turn in enumerate(outcome.turns):
                usage = turn.usage or Usage()
                yield TurnRow(
                    run=self.summary.run,
                    scenario=outcome.scenario,
                    index=outcome.index,
                    turn=number,
                    user=turn.user,
                    agent=turn.agent,
                    seconds=turn.seconds,
                    input_tokens=usage.input,
                    output_tokens=usage.output,
                    steps=len(turn.steps),
                    first=turn.first,
                )

    def claims(self) -> Iterator[ClaimRow]:
        for outcome in self.run.outcomes():
            match outcome.decision:
                case Verdict(claims=results):
                    for result in results:
                        yield ClaimRow(
                            run=self.summary.run,
                            scenario=outcome.scenario,
                            index=outcome.index,
                            claim=result.claim,
                            passed=result.passed,
                            grade=result.grade,
                            reason=result.reason or None,
                        )
                case Failed() | NoVerdict():
                    pass

    def scenarios(self) -> Iterator[ScenarioRow]:
        for scenario in self.summary.scenarios:
            match scenario.rate:
                case Rate(value=value, low=low, high=high):
                    rate: tuple[float | None, float | None, float | None] = (value, low, high)
                case Unknown():
                    rate = (None, None, None)
            match scenario.pass_k:
                case Share(value=share):
                    pass_k: float | None = share
                case Unknown():
                    pass_k = None
            yield ScenarioRow(
                run=self.summary.run,
                scenario=scenario.name,
                attempts=scenario.attempts,
                held=scenario.tally.held,
                judged=scenario.tally.judged,
                pass_rate=rate[0],
                low=rate[1],
                high=rate[2],
                pass_k=pass_k,
                failed=scenario.failed,
                no_verdict=scenario.no_verdict,
                category=scenario.category,
            )

    def steps(self) -> Iterator[StepRow]:
        for outcome in self.run.outcomes():
            for number, turn in enumerate(outcome.turns):
                for position, step in enumerate(turn.steps):
                    yield self._step(outcome, number, position, step)

    def _step(self, outcome: Outcome, turn: int, position: int, step: Thought | Call) -> StepRow:
        kind: Literal["thought", "call"]
        said: str | None
        called: tuple[str | None, str | None, str | None] = (None, None, None)
        match step:
            case Thought(text=text):
                kind, said = "thought", text
            case Call(name=name, arguments=arguments, result=result):
                kind, said = "call", None
                called = (name, arguments or None, result or None)
        return StepRow(
            run=self.summary.run,
            scenario=outcome.scenario,
            index=outcome.index,
            turn=turn,
            step=position,
            type=kind,
            name=called[0],
            arguments=called[1],
            result=called[2],
            text=said,
        )

    def _spent(self, outcome: Outcome) -> tuple[tuple[Literal["agent", "user", "judge"], Usage], ...]:
        """The tokens each party spent on the attempt, the agent's added up over its turns."""
        return (
            ("agent", AgentTokens(outcome.turns).usage()),
            ("user", outcome.user_usage or Usage()),
            ("judge", outcome.judge_usage or Usage()),
        )

    def usage(self) -> Iterator[UsageRow]:
        for outcome in self.run.outcomes():
            for participant, usage in self._spent(outcome):
                yield UsageRow(
                    run=self.summary.run,
                    scenario=outcome.scenario,
                    index=outcome.index,
                    participant=participant,
                    input=usage.input,
                    output=usage.output,
                )

    def failures(self) -> Iterator[FailureRow]:
        for outcome in self.run.outcomes():
            raw = ""
            match outcome.decision:
                case Failed(reason=reason, detail=detail, status=status, message=message):
                    kind: Literal["failed", "no_verdict"] = "failed"
                    party = "agent"
                case NoVerdict(reason=reason, detail=detail, status=status, message=message, raw=raw):
                    kind = "no_verdict"
                    party = Whose(reason=reason, detail=detail).party()
                case Verdict():
                    continue
            yield FailureRow(
                run=self.summary.run,
                scenario=outcome.scenario,
                index=outcome.index,
                type=kind,
                party=party,
                reason=reason,
                detail=detail or None,
                status=status or None,
                message=message or None,
                raw=raw or None,
            )
