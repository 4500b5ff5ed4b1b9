"""A calibration's progress as the command shows it on stderr: the stale and copied label decisions
left out, each at its file:line, then how many labelled attempts the judge has decided, at each
tenth of them."""

from __future__ import annotations

from typing import TextIO

import convy
from convy import Plural, Untrusted

STEPS = 10
"""How many times the count is said while a calibration goes (and once at its end)."""
FEW = 100
"""Fewer labelled attempts than this are decided without a count: in a moment."""


class CalibrationShown:
    """Progress told by a calibration, written to `err`; `stale`: whether the decisions left out
    are listed (`convy calibrate` lists them with its figures instead)."""

    def __init__(self, err: TextIO, stale: bool = True) -> None:
        self.err = err
        self.stale = stale
        self.said = 0

    def __call__(self, progress: convy.CalibrationProgress) -> None:
        if progress.line is None:
            self.started(progress)
            return
        if progress.total < FEW:
            return
        step = progress.done * STEPS // max(1, progress.total)
        if step > self.said or progress.done == progress.total:
            self.said = step
            self.err.write(f"convy: calibrating the judge: {progress.done:,} of {progress.total:,} decided\n")
            self.err.flush()

    def started(self, progress: convy.CalibrationProgress) -> None:
        if self.stale and progress.stale:
            left = Plural(len(progress.stale), "label decision").text()
            self.err.write(f"convy: {left} left out of the calibration:\n")
            for stale in progress.stale:
                text = Untrusted(text=stale.claim).console(120)
                self.err.write(f"  {stale.where} {stale.scenario}: {text!r}: {stale.why}\n")
        if progress.total:
            self.err.write(
                f"convy: calibrating the judge on {Plural(progress.total, 'labelled attempt').text()}…\n"
            )
        self.err.flush()
