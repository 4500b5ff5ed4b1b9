"""How a time, a token count or a plain number is written in the comment, the console and the pages;
None is unknown."""

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
        """A change, with its sign: `+0.25 s`, `−120 tokens`, `±0`; a change too small to show is
        `±0.00 s`, never `−0.00 s`."""
        if self.value is None:
            return "unknown"
        size = self.shown(abs(self.value), "")
        if not any(digit in size for digit in "123456789"):
            return "±" + size
        return ("+" if self.value > 0 else "−") + size

    def shown(self, value: float, sign: str) -> str:
        match self.unit:
            case "s":
                return f"{sign}{value:.2f} s" if value < 10 else f"{sign}{value:,.1f} s"
            case "tokens":
                return f"{sign}{WholeNumber(value=value).text()} tokens"
            case _:
                return sign + WholeNumber(value=value).text()


class WholeNumber(msgspec.Struct, frozen=True, kw_only=True):
    """A count, or a median of counts: whole numbers without decimals, a half kept (39.5, not 40)."""

    value: float

    def text(self) -> str:
        return f"{self.value:,.1f}".removesuffix(".0")
