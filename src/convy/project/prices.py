"""The `prices` setting read: the prices a project gives its models by name, in USD per million
tokens (`{"gpt-4o-mini": {"input": 0.15, "output": 0.60}}`), over the price library's."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from convy.data import Declared
from convy.errors import ConfigurationError
from convy.project.flowtext import FlowText

PerMillion = Annotated[float, Meta(ge=0)]


class Price(Declared, frozen=True, kw_only=True):
    """What a model costs in USD per million tokens read (`input`) and written (`output`)."""

    input: PerMillion
    output: PerMillion

    def of(self, input: int, output: int) -> float:
        """The USD that many tokens cost."""
        return (input * self.input + output * self.output) / 1_000_000


class PriceTable(msgspec.Struct, frozen=True):
    """The prices the `prices` setting gives, by model name (empty: none)."""

    prices: dict[str, Price] = msgspec.field(default_factory=dict)

    @classmethod
    def read(cls, text: str, where: str = "prices") -> PriceTable:
        """The setting's text read — JSON, or the same table in YAML's flow style, as the README writes it
        (`{gpt-4o-mini: {input: 0.15, output: 0.60}}`: YAML is a superset, keys need no quotes);
        ConfigurationError naming `where` when it is not a table of model names to `{input, output}`
        prices of 0 or more."""
        if not text.strip():
            return cls()
        raw = FlowText(text).value(where)
        try:
            return cls(msgspec.convert(raw, type=dict[str, Price]))
        except msgspec.ValidationError as error:
            raise ConfigurationError(
                where, f"must map model names to {{input, output}} in USD per million tokens: {error}"
            ) from None

    def price(self, name: str) -> Price | None:
        """The price given for the model named `name` (exactly, else ignoring case)."""
        if name in self.prices:
            return self.prices[name]
        folded = name.casefold()
        return next((price for key, price in self.prices.items() if key.casefold() == folded), None)
