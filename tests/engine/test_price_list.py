"""The price library's data read without importing the library (decision 57): every model it lists
priced as the library itself prices it, by its provider's URL and by the name alone, at peak and
off-peak hours and before and after a dated price; the data kept in a cache file per release and
read from it; and a price looked up without pydantic, the library or a second HTTP client imported."""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from convy.play.pricelist import PriceList, Shipped, Unpacked

MOMENTS = (
    datetime.datetime(2026, 3, 2, 3, 0, tzinfo=datetime.UTC),
    datetime.datetime(2026, 12, 7, 18, 0, tzinfo=datetime.UTC),
    datetime.datetime(2025, 1, 1, 12, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
)


@pytest.fixture(scope="module")
def prices(tmp_path_factory: pytest.TempPathFactory) -> PriceList:
    return Shipped(str(tmp_path_factory.mktemp("cache"))).prices()


def library_price(name: str, url: str, at: datetime.datetime) -> tuple[float, float] | None:
    """The price as genai-prices' own API gives it (what convy asked before decision 57)."""
    from genai_prices import Usage, calc_price
    from genai_prices.data_snapshot import get_snapshot

    provider: str | None = None
    if url:
        try:
            provider = get_snapshot().find_provider(None, None, url).id
        except LookupError:
            provider = None

    def rate(input: int, output: int) -> float:
        used = Usage(input_tokens=input, output_tokens=output)
        found = calc_price(used, name, provider_id=provider, genai_request_timestamp=at)
        return float(found.total_price) * 1000.0

    try:
        return (rate(1000, 0), rate(0, 1000))
    except LookupError:
        return None


def test_every_model_is_priced_as_the_library_prices_it(prices: PriceList) -> None:
    assert len(prices.sellers) > 20 and sum(len(s.models) for s in prices.sellers) > 1000
    urls = {"openai": "https://api.openai.com/v1", "openrouter": "https://openrouter.ai/api/v1"}
    compared = differ = 0
    for seller in prices.sellers:
        for model in seller.models:
            dated = any(rate.since or rate.start for rate in model.rates)
            for at in MOMENTS if dated else MOMENTS[:1]:
                for url in ("", "http://127.0.0.1:9/v1", urls.get(seller.id, "https://api.openai.com/v1")):
                    mine = prices.price(model.id.upper(), url, at)
                    compared += 1
                    if library_price(model.id.upper(), url, at) != (
                        None if mine is None else (mine.input, mine.output)
                    ):
                        differ += 1
    assert compared > 3000 and differ == 0


def test_a_compact_date_a_daily_price_and_an_unknown_model() -> None:
    at = MOMENTS[0]
    prices = Shipped().prices()
    assert prices.source.startswith("genai-prices ")
    openai = "https://api.openai.com/v1"
    dated = prices.price("gpt-4o-mini-20240718", openai, at)
    assert dated is not None and dated == prices.price("gpt-4o-mini-2024-07-18", openai, at)
    assert prices.price("no-such-model-anywhere", "https://api.openai.com/v1", at) is None
    assert prices.price("bench", "http://127.0.0.1:1/v1", at) is None
    assert PriceList().price("gpt-4o-mini", "", at) is None, "an empty list knows no price"


def test_the_data_is_read_once_a_release_and_then_from_the_cache_file(tmp_path: Path) -> None:
    first = Shipped(str(tmp_path)).prices()
    (kept,) = tmp_path.glob("prices-genai-prices-*.json")
    record = json.loads(kept.read_bytes())
    assert record["prices"]["source"] == first.source
    # the file is what a later run reads: a price written into it is the price found
    for seller in record["prices"]["sellers"]:
        for model in seller["listed"]:
            if model["id"] == "gpt-4o-mini":
                model["rates"] = [{"input": {"base": "7"}, "output": {"base": "9"}}]
    kept.write_bytes(json.dumps(record).encode())
    again = Shipped(str(tmp_path)).prices()
    changed = again.price("gpt-4o-mini", "https://api.openai.com/v1", MOMENTS[0])
    assert changed is not None and (changed.input, changed.output) == (7.0, 9.0)
    # a file of another installed data file (its size differs) is read again from the library
    record["size"] += 1
    kept.write_bytes(json.dumps(record).encode())
    assert Shipped(str(tmp_path)).prices() == first
    kept.write_bytes(b"{not json")
    assert Shipped(str(tmp_path)).prices() == first
    assert msgspec.json.decode(kept.read_bytes())["prices"]["source"] == first.source


def test_an_unwritable_cache_folder_still_prices(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    found = Shipped(str(blocked / "cache")).prices()
    assert found.price("gpt-4o-mini", "https://api.openai.com/v1", MOMENTS[0]) is not None


def test_a_price_is_looked_up_without_pydantic_the_library_or_a_second_http_client(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from convy.play.price import PriceBook\n"
        "price = PriceBook().price('gpt-4o-mini', 'https://api.openai.com/v1')\n"
        "assert price is not None and price.input > 0, price\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pydantic', 'pydantic_core', 'genai_prices', 'httpx2', 'httpcore2')))\n"
    )
    for _ in range(2):  # the first builds the cache file, the second reads it
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={"PATH": "", "XDG_CACHE_HOME": str(tmp_path), "HOME": str(tmp_path)},
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "[]"


def test_a_data_module_of_another_shape_prices_nothing_rather_than_wrongly(tmp_path: Path) -> None:
    known = tmp_path / "known.py"
    known.write_text(
        "import datetime\nfrom decimal import Decimal\nfrom .types import *\n"
        "providers = [Provider(id='p', api_pattern='https://p', models=[ModelInfo(id='m', "
        "match=ClauseEquals(equals='m'), "
        "prices=ModelPrice(input_mtok=Decimal('2'), output_mtok=Decimal('3')))])]\n"
    )
    (seller,) = Unpacked(Shipped().providers(known)).sellers()
    found = PriceList("p 1", (seller,)).price("M", "https://p/v1", MOMENTS[0])
    assert found is not None and (found.input, found.output) == (2.0, 3.0)
    odd = tmp_path / "odd.py"
    odd.write_text("from .types import *\nproviders = build_them()\n")
    assert Shipped().providers(odd) == []
    importing = tmp_path / "importing.py"
    importing.write_text("import os\nproviders = [os.getcwd()]\n")
    assert Shipped().providers(importing) == [], "the data module imports nothing but its types"
