"""The child processes' side of two workloads, started as `run.py --read-runs NOW BASE` (workload 4:
ReadRuns, each step of reading, summing up, comparing, gating and rendering timed) and `run.py
--httpx-floor ...` (workload 2: HttpxFloor, the same requests made by a bare httpx loop). Each
prints one JSON line for the benchmark to read."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from measure import MB

HERE = Path(__file__).resolve().parent


class ReadRuns:
    """The child side of workload 4 (`run.py --read-runs NOW BASE`): each step timed, RSS after it."""

    def __init__(self, now: Path, before: Path) -> None:
        self._now = now
        self._before = before

    def run(self) -> None:
        import resource

        started = time.perf_counter()
        from convy.compare.comparison import Compared
        from convy.compare.gate import Gate
        from convy.compare.summary import Summed
        from convy.conduct.review import Reviewed
        from convy.draw.links import Links
        from convy.store.runs import Runs

        seconds: dict[str, float | str] = {}
        rss: dict[str, float] = {}
        startup = time.perf_counter() - started

        @contextlib.contextmanager
        def step(name: str) -> Iterator[None]:
            clock = time.perf_counter()
            yield
            seconds.setdefault(name, time.perf_counter() - clock)
            rss[name] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / MB

        rss["imports"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / MB
        runs = Runs(self._now.parent.parent)
        with step("read+summarise"):
            now = runs.one(self._now)
            before = runs.one(self._before)
            now_summary = Summed.of(now).summary()
            before_summary = Summed.of(before).summary()
        with step("compare"):
            comparison = Compared(now_summary, before_summary).comparison()
        with step("gate"):
            decision = Gate().decision(comparison)
        reviewed = Reviewed(run=now, comparison=comparison, decision=decision)
        with step("markdown"):
            try:
                markdown = reviewed.comment(Links())
            except ModuleNotFoundError as error:
                markdown = ""
                seconds["markdown"] = f"n/a ({error})"
        with step("html"):
            try:
                from convy.draw.report import ComparisonPage, Report

                html = Report(now_summary, now.outcomes(), decision).html()
                html += ComparisonPage(comparison, decision, now.outcomes(), before.outcomes()).html()
            except ModuleNotFoundError as error:
                html = ""
                seconds["html"] = f"n/a ({error})"
        sys.stdout.write(
            json.dumps(
                {
                    "startup": startup,
                    "seconds": seconds,
                    "rss_mb": rss,
                    "markdown_chars": len(markdown),
                    "html_chars": len(html),
                }
            )
            + "\n"
        )


class HttpxFloor:
    """What httpx alone costs for the same requests: `attempts` conversations, `concurrency` at once,
    each `turns` rounds of a model request (the simulated user, its messages growing) and an agent
    request (the dialogue so far), then one more model request (the judge's transcript), all through
    one shared AsyncClient, each answer decoded. Prints the CPU milliseconds per request after the
    imports (the start-up not counted) and the requests answered."""

    def __init__(self, agent: str, models: str, attempts: int, turns: int, concurrency: int) -> None:
        self._agent = agent
        self._models = models
        self._attempts = attempts
        self._turns = turns
        self._concurrency = concurrency

    def run(self) -> None:
        import httpx
        import msgspec

        # The search path of `python -m convy` (the current folder first, no benchmarks folder): a
        # failed import (httpcore's of sniffio, on every request) costs a look in each entry.
        sys.path[:] = [os.getcwd(), *(p for p in sys.path if p and Path(p).resolve() != HERE)]
        brief = {"role": "system", "content": "You are a customer of an online shop. " * 20}
        headers = {"Content-Type": "application/json"}
        answered = 0

        async def post(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> str:
            nonlocal answered
            response = await client.post(url, content=msgspec.json.encode(body), headers=headers)
            answered += response.status_code == 200
            return str(msgspec.json.decode(response.content)["choices"][0]["message"]["content"])

        async def conversation(client: httpx.AsyncClient, room: asyncio.Semaphore) -> None:
            async with room:
                dialogue: list[dict[str, str]] = []
                for _ in range(self._turns):
                    said = await post(
                        client, self._models, {"model": "bench", "messages": [brief, *dialogue]}
                    )
                    dialogue.append({"role": "user", "content": said})
                    answer = await post(client, self._agent, {"model": "bench", "messages": dialogue})
                    dialogue.append({"role": "assistant", "content": answer})
            transcript = "\n".join(m["content"] for m in dialogue)
            await post(
                client,
                self._models,
                {"model": "bench", "messages": [brief, {"role": "user", "content": transcript}]},
            )

        async def played() -> None:
            room = asyncio.Semaphore(self._concurrency)
            async with httpx.AsyncClient() as client:
                await asyncio.gather(*(conversation(client, room) for _ in range(self._attempts)))

        started = time.process_time()
        asyncio.run(played())
        requests = self._attempts * (2 * self._turns + 1)
        cpu_ms = 1000 * (time.process_time() - started) / requests
        sys.stdout.write(json.dumps({"cpu_ms": cpu_ms, "requests": answered}) + "\n")
