"""A comparison and the gate's decision as a terminal shows them: the comment's content without
markdown or HTML, in plain tables. What an agent or a model wrote is shown on one line, without
control characters or escape sequences, and starting no workflow command."""

from __future__ import annotations

import msgspec

from convy.compare.comparison import Comparison
from convy.compare.gate import GateDecision
from convy.draw.blocks import Excerpt
from convy.draw.figures import Figures
from convy.draw.judgeline import JudgeLine
from convy.draw.notes import RunNotes
from convy.draw.untrusted import ELLIPSIS, Untrusted
from convy.words import Plural, Sentence

STYLE = "simple"


class TerminalCells(msgspec.Struct, frozen=True):
    """Untrusted text for a terminal or an Actions log: control characters (escape sequences
    included) and bidirectional overrides made visible as U+FFFD, no workflow command, one line, cut
    to `limit` characters (the last one `…`)."""

    def cell(self, text: str, limit: int) -> str:
        if limit < 1:
            raise ValueError("a limit of 1 character or more is needed")
        line = " ".join(Untrusted(text=Excerpt(text=text, limit=limit).start()).logged().split())
        return line if len(line) <= limit else line[: limit - 1] + ELLIPSIS


class ConsoleText(msgspec.Struct, frozen=True):
    """What `convy run` and `convy compare` print once a run is compared and gated."""

    comparison: Comparison
    decision: GateDecision

    def text(self) -> str:
        figures = Figures(self.comparison, self.decision, TerminalCells())
        notes = RunNotes(self.comparison, TerminalCells())
        comparison = self.comparison
        troubles = figures.troubles(STYLE)
        title, none = figures.troubles_heading(len(troubles.groups))
        head = [
            f"convy: {self.decision.verdict.upper()} · {figures.agent()}",
            JudgeLine(comparison.now.calibration, wanted=self.decision.labels_wanted).text(),
            Sentence(f"Decided by {self.decision.rule}: {figures.explanation()}").text(),
            *(Sentence(f"Note: {note}").text() for note in notes.notes()),
        ]
        parts = ["\n".join(head), f"{title}\n{troubles.text() if troubles.groups else none}"]
        if comparison.now.parties:
            parts.append(f"Why attempts did not hold\n{figures.parties(STYLE).text()}")
        if comparison.attacks():
            parts.append(f"Attacks\n{figures.attacked()}\n{figures.attacks(STYLE).text()}")
        once = notes.once()
        parts += [
            f"Pass rate {comparison.now.rate.text()} {figures.change()}.\n{figures.key(STYLE).text()}"
            + (f"\n{once[0].upper()}{once[1:]}." if once else "")
            + "".join(
                f"\n{line}"
                for line in [JudgeLine(comparison.now.calibration, comparison.now.corrected).rate()]
                if line
            ),
        ]
        lower = self.decision.within_noise(comparison)
        if lower:
            names = ", ".join(TerminalCells().cell(s.name, 60) for s in lower)
            alone = self.decision.significant_drop(comparison)
            noise = "not significant on its own" if alone else "within noise"
            parts.append(f"Lower than the baseline, {noise} ({len(lower)}): {names}")
        parts += [
            f"All metrics\n{figures.metrics(STYLE).text()}",
            f"All {Plural(len(comparison.scenarios), 'scenario').text()}\n{figures.scenarios(STYLE).text()}",
        ]
        return "\n\n".join(parts)
