"""What a run (or one scenario of it) cost in USD, summed from its attempts' costs while they stream
past: the part that is known, and whether some part is not (a model of unknown price, a folder older
than prices), so a total is never shown as $0 when it is unknown."""

from __future__ import annotations

import math

import msgspec

from convy.data import Data
from convy.play.outcome import Outcome


class Money(Data, frozen=True, kw_only=True):
    """A sum of costs in USD: `usd` the known parts added up; `unknown` how many attempts had a part
    of unknown cost, `known` how many had some part known."""

    usd: float = 0.0
    known: int = 0
    unknown: int = 0
    calibration: float = 0.0
    """Of `usd`, what calibrating the judge on the labels cost (0: nothing, or not a run's)."""

    @property
    def whole(self) -> bool:
        """Every part is known: `usd` is the cost, not a lower bound."""
        return self.unknown == 0 and self.known > 0

    def text(self) -> str:
        """`$0.42`, `≥ $0.42` when a part is unknown, `unknown` when no part is known; with what
        calibrating the judge took of it when it took something (`$0.42 ($0.10 of it calibrating
        the judge)`), so two runs that differ by a calibration say so."""
        if not self.known:
            return "unknown"
        shown = Dollars(self.usd).text()
        shown = shown if self.unknown == 0 else f"≥ {shown}"
        if self.calibration > 0:
            return f"{shown} ({Dollars(self.calibration).text()} of it calibrating the judge)"
        return shown


class Dollars(msgspec.Struct, frozen=True):
    """An amount in USD as convy writes it: cents from $1 up, else two significant digits."""

    usd: float

    def text(self) -> str:
        if self.usd >= 1 or self.usd <= 0:
            return f"${self.usd:,.2f}"
        rounded = float(f"{self.usd:.2g}")
        places = max(2, 1 - math.floor(math.log10(rounded)))
        return f"${rounded:.{places}f}"


class Costs(msgspec.Struct):
    """Attempts' costs added up as they stream past."""

    usd: list[float] = msgspec.field(default_factory=list)
    known: int = 0
    unknown: int = 0
    calibration: float = 0.0

    def add(self, outcome: Outcome) -> None:
        cost = outcome.cost
        parts = (None,) if cost is None else (cost.user, cost.judge, cost.agent)
        known = [part for part in parts if part is not None]
        self.usd.extend(known)
        self.known += bool(known)
        self.unknown += len(known) < len(parts)

    def spent(self, usd: float | None) -> None:
        """A cost of the run apart from its attempts (its judge's calibration), None unknown."""
        if usd is None:
            self.unknown += 1
            return
        self.usd.append(usd)
        self.known += 1
        self.calibration += usd

    def money(self) -> Money:
        return Money(
            usd=round(math.fsum(self.usd), 12),
            known=self.known,
            unknown=self.unknown,
            calibration=round(self.calibration, 12),
        )
