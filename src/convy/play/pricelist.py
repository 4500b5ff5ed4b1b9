"""The price library's data in our own types: genai-prices' providers (each with the URL pattern of
its API and the models it sells) read once from the installed package's data, without importing the
package (which would import pydantic and a second HTTP client), and kept in a cache file per release
of the library, so a run reads a small JSON file instead (decision 57).

A model is looked up as genai-prices looks it up: the provider whose API pattern matches the model's
URL (a URL of no provider: the first provider whose model pattern matches the name), then the first of
its models whose pattern matches the name, lower-cased (again with a compact date `-20251211` written
`-2025-12-11`), then the same in each provider it falls back to. Its price is the rate in force now
(a later dated or daily price over an earlier one), per million tokens read and written, each with
the price of a request."""

from __future__ import annotations

import builtins
import contextlib
import datetime
import decimal
import importlib.machinery
import importlib.util
import os
import re
import tempfile
import types
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from convy.project.prices import Price

LIBRARY = "genai-prices"
"""The price library: the Pydantic team's, looked up by model name and provider (decision 29)."""

SAMPLE = 1_000
"""Tokens priced to read a rate per million: few enough to stay under any long-context tier."""

FORMAT = 2
"""The cache file's format: a file of another is read again from the library."""

COMPACT_DATE = re.compile(r"(-)(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|$)")


class Clause(msgspec.Struct, frozen=True, omit_defaults=True):
    """A pattern a name is matched with, as the library writes it: `equals`, `starts_with`,
    `ends_with`, `contains` (each ignoring case), `regex` (searched), or `or` / `and` of `parts`.
    Empty (no kind): matches nothing."""

    kind: str = ""
    text: str = ""
    parts: tuple[Clause, ...] = ()

    def matches(self, name: str) -> bool:
        folded = name.lower()
        match self.kind:
            case "equals":
                return folded == self.text.lower()
            case "starts_with":
                return folded.startswith(self.text.lower())
            case "ends_with":
                return folded.endswith(self.text.lower())
            case "contains":
                return self.text.lower() in folded
            case "regex":
                return re.search(self.text, name) is not None
            case "or":
                return any(part.matches(name) for part in self.parts)
            case "and":
                return all(part.matches(name) for part in self.parts)
        return False


class Tiered(msgspec.Struct, frozen=True, omit_defaults=True):
    """A price per million tokens (a decimal's text), and the higher ones from a number of input
    tokens on (`tiers`: (start, price), lowest start first)."""

    base: str = "0"
    tiers: tuple[tuple[int, str], ...] = ()

    def at(self, input_tokens: int) -> decimal.Decimal:
        for start, price in reversed(self.tiers):
            if input_tokens > start:
                return decimal.Decimal(price)
        return decimal.Decimal(self.base)


class Charge(msgspec.Struct, frozen=True, omit_defaults=True):
    """One of a model's prices: per million tokens read and written, per thousand requests, and
    when it is in force — from a day on (`since`, ISO date, UTC) and/or daily from `start` to `end`
    (ISO times of day, UTC; an end before the start runs past midnight). Empty: free, always."""

    input: Tiered = Tiered()
    output: Tiered = Tiered()
    requests: str = "0"
    since: str = ""
    start: str = ""
    end: str = ""

    def in_force(self, at: datetime.datetime) -> bool:
        moment = at.astimezone(datetime.UTC)
        if self.since and moment.date().isoformat() < self.since:
            return False
        if self.start:
            now = moment.time()
            start, end = datetime.time.fromisoformat(self.start), datetime.time.fromisoformat(self.end)
            if end < start:
                return now >= start or now < end
            return start <= now < end
        return True

    def price(self) -> Price:
        """USD per million tokens read and written, as the library prices SAMPLE tokens of each
        (one request's price with each)."""
        request = decimal.Decimal(self.requests) / 1000
        per = 1_000_000 / SAMPLE

        def of(tiered: Tiered, input_tokens: int) -> float:
            total = tiered.at(input_tokens) * SAMPLE / 1_000_000 + request
            return float(total) * per

        return Price(input=of(self.input, SAMPLE), output=of(self.output, 0))


class Sold(msgspec.Struct, frozen=True):
    """A model a provider sells: its id, the pattern of the names it goes by, its rates (the first
    the default, a later one in force over an earlier one)."""

    id: str
    match: Clause
    rates: tuple[Charge, ...] = ()

    def rate(self, at: datetime.datetime) -> Charge:
        for rate in reversed(self.rates):
            if rate.in_force(at):
                return rate
        return self.rates[0] if self.rates else Charge()


class Seller(msgspec.Struct, frozen=True):
    """A provider: its id, the pattern of its API's URL, the pattern of the model names it is the
    provider of, the providers it falls back to for a model it does not list, its models (kept as
    their JSON, read only for the provider a price is looked up at: a run prices a few models of
    one or two providers)."""

    id: str
    api: str
    names: Clause = Clause()
    fallback: tuple[str, ...] = ()
    listed: msgspec.Raw = msgspec.Raw(b"[]")

    @classmethod
    def selling(
        cls, id: str, api: str, names: Clause, fallback: tuple[str, ...], models: tuple[Sold, ...]
    ) -> Seller:
        return cls(id, api, names, fallback, msgspec.Raw(msgspec.json.encode(models)))

    @property
    def models(self) -> tuple[Sold, ...]:
        return msgspec.json.decode(self.listed, type=tuple[Sold, ...])

    def own(self, name: str) -> Sold | None:
        return next((model for model in self.models if model.match.matches(name)), None)


class PriceList(msgspec.Struct, frozen=True):
    """The library's providers, as `source` (`genai-prices 0.2.5`) ships them. Empty: no price known."""

    source: str = ""
    sellers: tuple[Seller, ...] = ()

    def seller_at(self, url: str) -> Seller | None:
        """The provider whose API is at `url` (api.openai.com: openai), None for a URL of none."""
        return next((seller for seller in self.sellers if re.match(seller.api, url)), None)

    def price(self, name: str, url: str, at: datetime.datetime) -> Price | None:
        """The price of the model `name` at the provider `url` points at, else by the name alone;
        None when no provider sells it."""
        folded = name.lower()
        seller = self.seller_at(url) if url else None
        if seller is None:
            seller = next((s for s in self.sellers if s.names.matches(folded)), None)
        if seller is None:
            return None
        model = self.model(seller, folded)
        if model is None:
            dated = COMPACT_DATE.sub(self.dashed, folded)
            model = self.model(seller, dated) if dated != folded else None
        return None if model is None else model.rate(at).price()

    def model(self, seller: Seller, name: str) -> Sold | None:
        found = seller.own(name)
        for other in seller.fallback:
            if found is not None:
                break
            fallen = next((s for s in self.sellers if s.id == other), None)
            found = fallen.own(name) if fallen is not None else None
        return found

    def dashed(self, match: re.Match[str]) -> str:
        year, month, day = (int(match.group(index)) for index in range(2, 5))
        try:
            datetime.date(year, month, day)
        except ValueError:
            return match.group(0)
        return f"{match.group(1)}{year:04d}-{month:02d}-{day:02d}"


class PriceFile(msgspec.Struct, frozen=True):
    """The cache file: the price list and the library's data file it was read from (its size and
    modification time), so a reinstalled library is read again."""

    format: int
    data: str
    size: int
    modified: int
    prices: PriceList


class Shipped(msgspec.Struct, frozen=True):
    """The price library as installed: its data module, read into a PriceList once per release and
    kept in `cache` (a folder; the user's cache folder unless given), so later runs read the small
    file. Nothing is cached where the folder cannot be written; no library installed: an empty list."""

    cache: str = ""

    def prices(self) -> PriceList:
        version = self.version()
        data = self.data_file()
        if not version or data is None:
            return PriceList()
        stat = data.stat()
        install = zlib.crc32(str(data).encode())  # one file per install: two venvs never take turns
        kept = self.folder() / f"prices-{LIBRARY}-{version}-{install:08x}.json"
        with contextlib.suppress(OSError, msgspec.DecodeError, msgspec.ValidationError):
            found = msgspec.json.decode(kept.read_bytes(), type=PriceFile)
            if (found.format, found.data, found.size, found.modified) == (
                FORMAT,
                str(data),
                stat.st_size,
                stat.st_mtime_ns,
            ):
                return found.prices
        prices = PriceList(f"{LIBRARY} {version}", Unpacked(self.providers(data)).sellers())
        record = PriceFile(FORMAT, str(data), stat.st_size, stat.st_mtime_ns, prices)
        with contextlib.suppress(OSError):
            kept.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=kept.parent, suffix=".tmp", delete=False) as out:
                out.write(msgspec.json.encode(record))
            os.replace(out.name, kept)
        return prices

    def version(self) -> str:
        """The installed release, named by its `.dist-info` folder beside the package (importing
        importlib.metadata costs tens of milliseconds), else as importlib.metadata finds it."""
        spec = importlib.util.find_spec("genai_prices")
        if spec is not None and spec.submodule_search_locations:
            beside = Path(next(iter(spec.submodule_search_locations))).parent
            found = sorted(beside.glob("genai_prices-*.dist-info"))
            if len(found) == 1:
                return found[0].name.removeprefix("genai_prices-").removesuffix(".dist-info")
        from importlib import metadata

        try:
            return metadata.version(LIBRARY)
        except metadata.PackageNotFoundError:
            return ""

    def data_file(self) -> Path | None:
        """The library's data module, found without importing the library."""
        spec = importlib.util.find_spec("genai_prices")
        if spec is None or not spec.submodule_search_locations:
            return None
        found = Path(next(iter(spec.submodule_search_locations))) / "data.py"
        return found if found.is_file() else None

    def folder(self) -> Path:
        if self.cache:
            return Path(self.cache)
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "convy"

    def providers(self, data: Path) -> list[Any]:
        """The data module's `providers`, each of the library's types made a plain record
        ({"": type name, **its arguments}): its compiled code (the installed bytecode when there
        is some) run with those types, the date module and Decimal as text, and nothing else; none
        when the module is of a shape this code does not know (every price then unknown)."""
        code = importlib.machinery.SourceFileLoader("genai_prices.data", str(data)).get_code(
            "genai_prices.data"
        )
        if code is None:
            return []
        made = types.ModuleType("genai_prices.types")
        kinds = [name for name in code.co_names if name[:1].isupper() and name != "Decimal"]
        for kind in kinds:
            setattr(made, kind, StandIn(kind))
        made.__dict__["__all__"] = kinds
        made.__dict__["Decimal"] = str
        allowed: dict[str, types.ModuleType] = {"types": made, "datetime": datetime, "decimal": decimal}

        def imported(
            name: str,
            globals: Mapping[str, object] | None = None,
            locals: Mapping[str, object] | None = None,
            fromlist: tuple[str, ...] = (),
            level: int = 0,
        ) -> types.ModuleType:
            if name in allowed:
                return allowed[name]
            raise ImportError(f"the price data imports {name}")

        space: dict[str, Any] = {
            "__builtins__": {**builtins.__dict__, "__import__": imported},
            "__name__": "genai_prices.data",
        }
        try:
            exec(code, space)  # noqa: S102 - the installed library's own data module
        except Exception:  # noqa: BLE001 - data of another shape: every price unknown, never a wrong one
            return []
        found = space.get("providers", [])
        return found if isinstance(found, list) else []


class StandIn:
    """One of the library's types, standing in while its data is read: a call gives a plain record."""

    def __init__(self, kind: str) -> None:
        self._kind = kind

    def __call__(self, *args: object, **kwargs: object) -> dict[str, object]:
        return {"": self._kind, **kwargs, **({"args": list(args)} if args else {})}


class Unpacked:
    """The library's records (Shipped.providers) made our types: what pricing a model needs."""

    def __init__(self, providers: list[Any]) -> None:
        self._providers = providers

    def sellers(self) -> tuple[Seller, ...]:
        return tuple(
            Seller.selling(
                str(p["id"]),
                str(p.get("api_pattern") or "(?!)"),
                self.clause(p.get("model_match")),
                tuple(p.get("fallback_model_providers") or ()),
                tuple(self.model(m) for m in p.get("models") or ()),
            )
            for p in self._providers
            if isinstance(p, dict)
        )

    def model(self, record: dict[str, Any]) -> Sold:
        prices = record.get("prices")
        rates: list[Charge] = []
        if isinstance(prices, dict):
            rates.append(self.rate(prices, None))
        elif isinstance(prices, list):
            rates.extend(self.rate(p.get("prices") or {}, p.get("constraint")) for p in prices)
        return Sold(id=str(record["id"]), match=self.clause(record.get("match")), rates=tuple(rates))

    def rate(self, price: dict[str, Any], constraint: dict[str, Any] | None) -> Charge:
        since = start = end = ""
        if isinstance(constraint, dict) and "start_date" in constraint:
            since = constraint["start_date"].isoformat()
        if isinstance(constraint, dict) and "start_time" in constraint:
            start = self.utc(constraint["start_time"])
            end = self.utc(constraint["end_time"])
        return Charge(
            input=self.tiered(price.get("input_mtok")),
            output=self.tiered(price.get("output_mtok")),
            requests=str(price.get("requests_kcount") or "0"),
            since=since,
            start=start,
            end=end,
        )

    def tiered(self, value: object) -> Tiered:
        if isinstance(value, dict):
            tiers = tuple((int(t["start"]), str(t["price"])) for t in value.get("tiers") or ())
            return Tiered(base=str(value.get("base", "0")), tiers=tiers)
        return Tiered(base=str(value)) if value is not None else Tiered()

    def utc(self, moment: datetime.time) -> str:
        if moment.tzinfo is not None:
            day = datetime.datetime.combine(datetime.date(1970, 1, 1), moment)
            moment = day.astimezone(datetime.UTC).time()
        return moment.replace(tzinfo=None).isoformat()

    def clause(self, record: object) -> Clause:
        if not isinstance(record, dict):
            return Clause()
        for key in ("equals", "starts_with", "ends_with", "contains", "regex"):
            if key in record:
                return Clause(key, str(record[key]))
        for key, kind in (("or_", "or"), ("and_", "and")):
            if key in record:
                return Clause(kind, parts=tuple(self.clause(part) for part in record[key]))
        return Clause()
