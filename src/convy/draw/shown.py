"""The model's numbers as the pages write them: only formatting, every number was computed by the
model; None and Unknown are `unknown`."""

from __future__ import annotations

import msgspec

from convy.compare.gate import GateDecision
from convy.compare.money import Dollars
from convy.compare.parts import Party, Reason, Spread
from convy.compare.statistics import PValue, Rate, Share, Tally, Unknown
from convy.compare.summary import Summary
from convy.draw.amount import Amount
from convy.draw.page import Band, Cell, Grid, Headline, Interval, PageRow, Tile, Tone
from convy.play.agent import Usage
from convy.words import Plural

VERDICT_TONES: dict[str, Tone] = {"pass": "good", "fail": "bad", "inconclusive": "warn"}


class ShownTokens(msgspec.Struct, frozen=True, kw_only=True):
    """The tokens one request reported, as text; None or a missing count is unknown."""

    usage: Usage | None

    def text(self) -> str:
        if self.usage is None:
            return "unknown"
        given = Amount(value=self.usage.input, unit="")
        taken = Amount(value=self.usage.output, unit="")
        return f"{given.text()} in · {taken.text()} out"


class Percent(msgspec.Struct, frozen=True, kw_only=True):
    """A rate, a share or a p-value as a page shows it; Unknown is `unknown`."""

    number: Rate | Share | PValue | Unknown

    def text(self) -> str:
        return self.number.text()

    def value(self) -> str:
        """The value alone, `75.0%`, without its interval."""
        match self.number:
            case Rate(value=value) | Share(value=value):
                return f"{value * 100:.1f}%"
            case _:
                return self.number.text()

    def interval(self) -> str:
        match self.number:
            case Rate(low=low, high=high):
                return f"95% interval {low * 100:.1f}–{high * 100:.1f}%"
            case _:
                return "interval unknown"

    def mark(self, label: str) -> Interval:
        """The rate as a chart marks it."""
        match self.number:
            case Rate(value=value, low=low, high=high):
                return Interval(label=label, text=self.text(), value=value, low=low, high=high)
            case Share(value=value):
                return Interval(label=label, text=self.text(), value=value, low=value, high=value)
            case _:
                return Interval(label=label, text=self.text())


class Figure(msgspec.Struct, frozen=True, kw_only=True):
    """A time or token figure's Spread as text and as a band of a chart."""

    spread: Spread
    unit: str

    def median(self) -> str:
        return Amount(value=self.spread.median, unit=self.unit).text()

    def rest(self) -> str:
        if not self.spread.count:
            return "nobody reported it"
        p90 = Amount(value=self.spread.p90, unit=self.unit).text()
        most = Amount(value=self.spread.most, unit=self.unit).text()
        return f"p90 {p90} · max {most}"

    def tile(self, label: str) -> Tile:
        """The figure at the top of a page: its median, its p90 and max under it."""
        return Tile(label=label, value=self.median(), note=self.rest())

    def line(self) -> str:
        if not self.spread.count:
            return "unknown"
        least = Amount(value=self.spread.least, unit=self.unit).text()
        return f"min {least} · median {self.median()} · {self.rest()}"

    def band(self, label: str) -> Band:
        s = self.spread
        return Band(
            label=label,
            value=self.median(),
            text=self.line(),
            least=s.least,
            median=s.median,
            p90=s.p90,
            most=s.most,
        )


class Reasons(msgspec.Struct, frozen=True, kw_only=True):
    """Attempts counted by reason, as text: `http_500 × 2 · timeout × 1`."""

    reasons: tuple[Reason, ...]

    def text(self) -> str:
        return " · ".join(f"{r.reason} × {r.count}" for r in self.reasons) or "none"


class Counted(msgspec.Struct, frozen=True, kw_only=True):
    """A tally as text: `9 of 12 judged held`."""

    tally: Tally

    def text(self) -> str:
        return f"{self.tally.held} of {self.tally.judged} judged held"

    def short(self) -> str:
        return f"{self.tally.held}/{self.tally.judged}"


class ScenarioResult(msgspec.Struct, frozen=True, kw_only=True):
    """A scenario's result within one run: passing (every judged attempt held), flaky (some did),
    failing (none did), or unjudged (no attempt was judged)."""

    tally: Tally

    def status(self) -> str:
        if not self.tally.judged:
            return "unjudged"
        if self.tally.held == self.tally.judged:
            return "passing"
        return "failing" if self.tally.held == 0 else "flaky"

    def label(self) -> str:
        return "no verdict" if self.status() == "unjudged" else self.status()

    def tone(self) -> Tone:
        tones: dict[str, Tone] = {"passing": "good", "flaky": "warn", "failing": "bad", "unjudged": "note"}
        return tones[self.status()]


class GateShown(msgspec.Struct, frozen=True, kw_only=True):
    """The gate's decision as a page's headline."""

    decision: GateDecision

    def headline(self) -> Headline:
        d = self.decision
        return Headline(
            verdict=d.verdict, rule=d.rule, explanation=d.explanation, tone=VERDICT_TONES[d.verdict]
        )


class Attributed(msgspec.Struct, frozen=True, kw_only=True):
    """A party's commonest message as shown beside it: for failed claims, who gave the reason — the
    judge, or a deterministic check (`check: no answer has it`); "" when there is none."""

    party: Party

    def text(self) -> str:
        p = self.party
        if not p.message or p.reason != "claims_failed":
            return p.message
        return f"{'check' if p.check else 'judge'}: {p.message}"


class ShownRun(msgspec.Struct, frozen=True, kw_only=True):
    """A run's summary as the header and tiles of a page show it."""

    summary: Summary

    def parties(self) -> Grid:
        """Whose fault each attempt that did not hold was (see docs/gate.md), with how many, the
        commonest reason and its message."""
        names = {
            "agent": "the agent",
            "user model": "the user model",
            "judge": "the judge",
            "busy": "busy services",
        }
        rows = tuple(
            PageRow(
                cells=(
                    Cell(text=names.get(p.party, p.party), tone="bad" if p.party == "agent" else "warn"),
                    Cell(text=f"{p.count}"),
                    Cell(text="failed claims" if p.reason == "claims_failed" else p.reason),
                    Cell(text=Attributed(party=p).text() or "—"),
                ),
                search=f"{p.party} {p.reason} {p.message}",
            )
            for p in self.summary.parties
        )
        return Grid(
            name="parties",
            title="Why attempts did not hold",
            columns=("Whose", "Attempts", "Commonest reason", "Its message"),
            rows=rows,
            filtered=False,
            numeric=(1,),
            empty="Every attempt held.",
        )

    def facts(self) -> tuple[str, ...]:
        s = self.summary
        facts = [f"started {s.started}" + (f", ended {s.ended}" if s.ended else ""), s.status]
        facts.append(f"repeat {s.repeat}")
        if s.user_model or s.judge_model:
            facts.append(f"user model {s.user_model or 'unknown'} · judge {s.judge_model or 'unknown'}")
        if s.ref:
            facts.append(s.ref)
        if s.sha:
            facts.append(f"commit {s.sha[:12]}")
        if s.pull_request:
            facts.append(f"pull request #{s.pull_request}")
        if s.agent_version:
            facts.append(f"agent build {s.agent_version}")
        return tuple(facts)

    def notices(self) -> tuple[str, ...]:
        s = self.summary
        notices: list[str] = []
        if s.status != "finished":
            notices.append(
                f"The run is {s.status}: {s.attempts} of {Plural(s.expected, 'attempt').text()} were played; "
                "the figures are of those."
            )
        if s.over_budget:
            notices.append(f"Stopped: {s.stop()}.")
        elif s.stopped:
            notices.append(f"Fail-fast stopped the run: {s.stopped}. `convy resume` plays the rest.")
        if s.torn:
            notices.append(
                "The last line of attempts.jsonl was torn (a crash while writing); it is left out."
            )
        return tuple(notices)

    def tiles(self) -> tuple[Tile, ...]:
        s = self.summary
        rate = Percent(number=s.rate)
        share = Percent(number=s.no_verdict_share).value()
        agent_in = Amount(value=s.agent_input_tokens.median).text()
        agent_out = Amount(value=s.agent_output_tokens.median).text()
        return (
            Tile(
                label="Pass rate",
                value=rate.value(),
                note=f"{rate.interval()} · {Counted(tally=s.tally).text()}",
            ),
            Tile(
                label="Attempts", value=f"{s.attempts}", note=f"of {s.expected} expected · repeat {s.repeat}"
            ),
            Tile(
                label="Without verdict",
                value=f"{s.no_verdict_attempts}",
                note=f"{share} of attempts · {Reasons(reasons=s.no_verdict).text()}",
                tone="warn" if s.no_verdict_attempts else "plain",
            ),
            Tile(
                label="Agent failures",
                value=f"{s.failed_attempts}",
                note=Reasons(reasons=s.failed).text(),
                tone="bad" if s.failed_attempts else "plain",
            ),
            Tile(
                label="Cost",
                value=s.cost.text(),
                note="the user's, the judge's and the agent's models"
                + (f" · budget {Dollars(s.budget).text()}" if s.budget else ""),
                tone="warn" if s.over_budget else "plain",
            ),
            Tile(
                label=f"pass^{s.repeat}, mean over scenarios",
                value=Percent(number=s.pass_k).value(),
                note=f"every one of {Plural(s.repeat, 'attempt').text()} of a scenario holds",
            ),
            Figure(spread=s.attempt_seconds, unit="s").tile("Attempt time, median"),
            Figure(spread=s.turn_seconds, unit="s").tile("Turn time, median"),
            *(
                (Figure(spread=s.first_seconds, unit="s").tile("Time to first token, median"),)
                if s.first_seconds.count
                else ()
            ),
            Figure(spread=s.turns, unit="").tile("Turns per attempt, median"),
            Tile(
                label="Agent tokens per attempt, median",
                value=f"{agent_in} in" if s.agent_input_tokens.count else "unknown",
                note=(
                    f"{agent_out} out · reported by {s.agent_input_tokens.count} of "
                    f"{Plural(s.attempts, 'attempt').text()}"
                ),
            ),
            Tile(
                label="Model tokens per attempt, median",
                value=f"user {Figure(spread=s.user_tokens, unit='').median()}",
                note=f"judge {Figure(spread=s.judge_tokens, unit='').median()}",
            ),
        )
