"""convy run folders: each attempt of attempts.jsonl a recorded conversation, its user's messages
and the agent's answers; `--where` looks at `scenario` and `holds` (`true`, `false`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec

from convy.draft.recorded import Recorded, Utterance
from convy.play.outcome import Outcome, Verdict


class RunFolder(msgspec.Struct, frozen=True):
    """A run folder (holding attempts.jsonl), as `shown` (its path as given)."""

    path: Path
    shown: str

    def conversations(self, warnings: list[str]) -> Iterator[Recorded]:
        decoder = msgspec.json.Decoder(Outcome)
        file = self.path / "attempts.jsonl"
        shown = f"{self.shown.rstrip('/')}/attempts.jsonl"
        with file.open("rb") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    outcome = decoder.decode(line)
                except (msgspec.DecodeError, msgspec.ValidationError) as error:
                    warnings.append(f"{shown}:{number}: skipped: not an attempt ({error})")
                    continue
                messages = tuple(
                    spoken
                    for turn in outcome.turns
                    for spoken in (Utterance("user", turn.user), Utterance("assistant", turn.agent))
                )
                holds = outcome.decision.holds if isinstance(outcome.decision, Verdict) else False
                yield Recorded(
                    run=self.shown.rstrip("/"),
                    session=outcome.scenario,
                    trace=outcome.trace_id,
                    index=outcome.index,
                    latest=float(number),
                    messages=messages,
                    kept={"scenario": outcome.scenario, "holds": "true" if holds else "false"},
                )
