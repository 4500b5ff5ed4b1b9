"""Amount: a time, a token count or a plain number as the comment, the console and the pages write
it; None is unknown."""

from __future__ import annotations

import msgspec


class Amount(msgspec.Struct, frozen=True, kw_only=True):
    """A time (`s`), a token count (`tokens`) or a plain number (`""`) as a page shows it; None is
    unknown."""

    value: float | None
    unit: str = ""

    def text(self) -> str:
        if self.value is None:
            return "unknown"
        return self.shown(self.value, "")

    def signed(self) -> str:
        """A change, with its sign: `+0.25 s`, `−120 tokens`, `±0`."""
        if self.value is None:
            return "unknown"
        sign = "+" if self.value > 0 else "−" if self.value < 0 else "±"
        return self.shown(abs(self.value), sign)

    def shown(self, value: float, sign: str) -> str:
        match self.unit:
            case "s":
                return f"{sign}{value:.2f} s" if value < 10 else f"{sign}{value:,.1f} s"
            case "tokens":
                return f"{sign}{value:,.0f} tokens"
            case _:
                return sign + f"{value:,.1f}".removesuffix(".0")
