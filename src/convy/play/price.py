"""What an attempt cost in money: a model's price by its name and the provider its URL points at
(the `prices` setting first, then the kept price library, genai-prices, its data read only when a
price is looked up), and the prices of a run's user, judge and agent models, which give an Outcome its
Cost.

A model with no known price costs None (unknown), never $0."""

from __future__ import annotations

import datetime
import functools

import msgspec

from convy.play.agent import Usage
from convy.play.outcome import Cost, Outcome
from convy.play.pricelist import LIBRARY, PriceList, Shipped
from convy.project.prices import Price, PriceTable

NEVER_ASKED = Price(input=0.0, output=0.0)
"""The price of a model with no name: the run never asks it (a run that would is refused)."""


class Library(msgspec.Struct, frozen=True):
    """genai-prices' data, read on the first price looked up (never by `convy --help`), without
    importing the library (decision 57)."""

    def price(self, name: str, url: str = "") -> Price | None:
        """The model's price at the provider `url` points at (api.openai.com: openai,
        openrouter.ai: openrouter...); by the name alone when no provider's API is at that URL
        (a local server, a gateway). None when the library does not know the model."""
        return self.prices().price(name, url, datetime.datetime.now(datetime.UTC))

    @functools.cache  # noqa: B019 - every Library is equal: read once a process
    def prices(self) -> PriceList:
        """The price library's data, read once a process (and from the cache file once a release)."""
        return Shipped().prices()

    def version(self) -> str:
        """`genai-prices 0.2.3`: what run.json records as the prices' source."""
        version = Shipped().version()
        return f"{LIBRARY} {version}" if version else ""


class PriceBook(msgspec.Struct, frozen=True):
    """Where a model's price comes from: the `prices` setting's table, else the library."""

    table: PriceTable = PriceTable()
    library: Library = Library()

    def price(self, name: str, url: str = "") -> Price | None:
        """The price of the model `name` reached at `url`; None when unknown."""
        if not name:
            return None
        return self.table.price(name) or self.library.price(name, url)

    def pricing(self, user: tuple[str, str], judge: tuple[str, str], agent: tuple[str, str]) -> Pricing:
        """The prices of a run's models, each given as (name, base URL); a user or judge model
        without a name is never asked, so it costs nothing."""
        return Pricing(
            user=self.price(*user) if user[0] else NEVER_ASKED,
            judge=self.price(*judge) if judge[0] else NEVER_ASKED,
            agent=self.price(*agent),
        )


class Pricing(msgspec.Struct, frozen=True, kw_only=True):
    """The prices of one run's models — the simulated user's, the judge's, the agent's — None where
    unknown. Empty: every price unknown."""

    user: Price | None = None
    judge: Price | None = None
    agent: Price | None = None

    def cost(self, outcome: Outcome) -> Cost:
        """What the attempt cost by whose requests: the tokens each reported, at its price. The
        agent's is known only when it reported tokens on some turn; the user's and the judge's are
        0 when they were not asked (no request of theirs was counted) or spent nothing."""
        return Cost(
            user=Priced(self.user, outcome.user_usage).usd(),
            judge=Priced(self.judge, outcome.judge_usage).usd(),
            agent=self.agent_cost(outcome),
        )

    def agent_cost(self, outcome: Outcome) -> float | None:
        used: Usage | None = None
        for turn in outcome.turns:
            if turn.usage is not None:
                used = turn.usage.plus(used)
        if used is None:
            return None
        return Priced(self.agent, used).usd()

    def priced(self, outcome: Outcome) -> Outcome:
        """The outcome with its cost."""
        return msgspec.structs.replace(outcome, cost=self.cost(outcome))


UNPRICED = Pricing()
"""No price known: every cost unknown."""


class Priced(msgspec.Struct, frozen=True):
    """Some tokens at a price: USD, None when the price or a token count is unknown. A party never
    asked (`usage` None: a scripted turn, a scenario without claims) or that spent no token (a
    verdict reused, a user replayed: 0 and 0) costs nothing, whatever its price; one asked whose
    service reported no tokens (a Usage with unknown counts) costs unknown, never $0. Usable on its
    own to price one party's tokens (a judge call saved, a user turn replayed)."""

    price: Price | None
    usage: Usage | None

    def usd(self) -> float | None:
        if self.usage is None or (self.usage.input == 0 and self.usage.output == 0):
            return 0.0
        if self.price is None:
            return None
        if self.usage.input is None or self.usage.output is None:
            return None
        return round(self.price.of(self.usage.input, self.usage.output), 12)
