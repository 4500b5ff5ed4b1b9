"""Attempt lines: how a run's attempts.jsonl is counted when it is read back — each (scenario, index)
once, the first line for it counting unless it says the play never reached the agent, and every line
that is not counted (malformed, torn, stray, a second one) named with why, so a damaged file is
reported rather than trusted or refused whole."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

import msgspec

from convy.data import Data
from convy.play.outcome import Failed, Outcome
from convy.store.runfile import Roster


class Damage(Data, frozen=True, kw_only=True):
    """A line of attempts.jsonl that is not counted, and why (1-based line number; 0: the whole
    file, e.g. missing)."""

    line: int
    why: str

    def text(self) -> str:
        if not self.line:
            return f"attempts.jsonl: {self.why}"
        return f"attempts.jsonl line {self.line}: {self.why}"


class Undelivered(msgspec.Struct, frozen=True):
    """Whether an attempt's line says its play never reached the agent (`not_delivered`): such an
    attempt is played again by a resume, and its line superseded by the new one."""

    outcome: Outcome

    @property
    def undelivered(self) -> bool:
        match self.outcome.decision:
            case Failed(reason="not_delivered"):
                return True
            case _:
                return False


class AttemptLines(msgspec.Struct, frozen=True):
    """The lines of an open attempts.jsonl as they count for a run that may hold `roster`'s
    attempts."""

    roster: Roster

    def read(self, stream: IO[bytes]) -> Iterator[tuple[int, Outcome | str]]:
        """Each non-blank line's number with its outcome, or the reason it is skipped; a line that
        supersedes a `not_delivered` one counts in its place, so those come last (see docs/run-folder.md)."""
        decoder = msgspec.json.Decoder(Outcome)
        seen: dict[tuple[str, int], int] = {}
        undelivered: dict[tuple[str, int], tuple[int, Outcome]] = {}
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                outcome = decoder.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError) as error:
                torn = not line.endswith(b"\n")
                kind = "torn (a crash while writing it)" if torn else "malformed"
                yield number, f"{kind}, skipped: {self.short(str(error))}"
                continue
            stray = self.roster.stray(outcome.scenario, outcome.index)
            if stray:
                yield number, f"{self.short(stray)}, skipped"
                continue
            key = (outcome.scenario, outcome.index)
            if key in undelivered:
                # a later line supersedes a not_delivered one: that play never reached the agent
                del undelivered[key]
                seen[key] = number
            first = seen.setdefault(key, number)
            if first == number and Undelivered(outcome).undelivered:
                undelivered[key] = (number, outcome)
                continue
            if first != number:
                yield (
                    number,
                    (
                        f"a second line for {outcome.scenario!r} attempt {outcome.index + 1} "
                        f"(the first, on line {first}, counts), skipped"
                    ),
                )
                continue
            yield number, outcome
        yield from undelivered.values()

    def short(self, text: str) -> str:
        return text if len(text) <= 120 else text[:119] + "…"
