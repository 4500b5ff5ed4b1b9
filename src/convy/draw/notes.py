"""Notes: what the reader of the comment or the console must know about how the run itself was
made before trusting its figures — stopped early or interrupted, a torn last line, a build reported for
two commits, the baseline re-judged, averaged pass rates — and what the run did not pay for again."""

from __future__ import annotations

import msgspec

from convy.compare.comparison import Comparison
from convy.compare.money import Dollars
from convy.compare.summary import Summary
from convy.draw.blocks import Cells
from convy.words import Plural


class RunNotes(msgspec.Struct, frozen=True):
    """The notes on a comparison's run, untrusted parts shown by `cells`."""

    comparison: Comparison
    cells: Cells

    def notes(self) -> tuple[str, ...]:
        """What the reader must know about the run itself: stopped early, interrupted, a torn last
        line, the same build of the agent for different commits, the baseline's scenarios re-judged."""
        now = self.comparison.now
        notes: list[str] = []
        if now.over_budget:
            notes.append(
                f"stopped: {now.stop()}: {now.attempts} of "
                f"{Plural(now.expected, 'attempt').text()} were played; the verdict is never a pass"
            )
        elif now.stopped and now.attempts < now.expected:
            notes.append(
                f"fail-fast stopped the run: {now.attempts} of "
                f"{Plural(now.expected, 'attempt').text()} were played; "
                "`convy resume` plays the ones missing"
            )
        elif now.stopped:
            notes.append("fail-fast stopped the run, but every attempt had already started")
        elif now.status != "finished":
            notes.append(
                f"the run is {now.status}: {now.attempts} of {Plural(now.expected, 'attempt').text()} "
                "were played"
            )
        if now.torn:
            notes.append("the last line of attempts.jsonl was torn (a crash mid-write) and was skipped")
        match self.comparison.baseline:
            case Summary(agent_version=before, sha=sha) if (
                before and before == now.agent_version and sha and now.sha and sha != now.sha
            ):
                notes.append(
                    f"both runs report agent build {self.cells.cell(before, 80)} but were made for "
                    f"different commits ({now.sha[:7]} now, {sha[:7]} in the baseline): "
                    "the deploy may not have rolled out yet"
                )
            case _:
                pass
        match self.comparison.baseline:
            case Summary(rejudging=again) if again.scenarios:
                tokens = "unknown" if again.judge_tokens is None else f"{again.judge_tokens:,}"
                noun, their = ("scenario", "its") if again.scenarios == 1 else ("scenarios", "their")
                notes.append(
                    f"{again.scenarios} {noun} re-judged: only {their} claims, checks or judge changed, "
                    f"so the baseline's {again.attempts} transcripts were judged again the way this run's "
                    f"are (judge tokens: {tokens}; the agent was not asked)"
                )
            case _:
                pass
        if now.stages:
            notes.append(
                "played by stages: each scenario's rate is read from its first attempt, averaged over the "
                "ways its attempts could have fallen given the stages it reached, so stopping early does "
                "not bias the pass rate; the drop is averaged over scenarios: each scenario's share held, "
                "every scenario weighing the same"
            )
        elif self.comparison.averaged:
            notes.append(
                "the scenarios have different numbers of judged attempts, so the pass rate and the drop "
                "are averaged over scenarios: each scenario's share held, every scenario weighing the same"
            )
        return tuple(notes)

    def once(self) -> str:
        """What this run did not pay for again: verdicts reused, user turns replayed and what those
        calls cost where they were first paid ("≥" when part of it is unknown, left out when all
        of it is); "" when nothing was reused or replayed."""
        saved = self.comparison.now.saved
        if not saved.verdicts and not saved.turns:
            return ""
        parts = []
        if saved.verdicts:
            parts.append(f"{Plural(saved.verdicts, 'verdict').text()} reused (no judge call)")
        if saved.turns:
            parts.append(f"{Plural(saved.turns, 'turn').text()} replayed (no user-model call)")
        text = "paid once: " + ", ".join(parts)
        if saved.money or not saved.unknown:
            text += f"; saved {'≥ ' if saved.unknown else ''}{Dollars(saved.money).text()}"
        return text
