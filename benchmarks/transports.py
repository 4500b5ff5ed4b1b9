"""httpx's transports measured (decisions 58 and 59): `python benchmarks/transports.py [--rounds 3]`.

The same bare loop as workload 2's (children.HttpxFloor: C = 8 conversations at once, each T = 3
rounds of a model and an agent request, then a judge request, A = 200 attempts, L = 0) made through
one shared `httpx.AsyncClient` with httpx's own transport, then with httpx-aiohttp's
`AiohttpTransport` (when installed), then with convy's own `KeptTransport` (decision 59), then with
the standard library alone (floor.py's loop), each a
child process of its own, in turn, `--rounds` times. Prints per variant the median CPU milliseconds
per request after its imports, and its peak RSS (imports and play)."""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

VARIANTS = ("httpx", "httpx-aiohttp", "kept", "floor")


def child(variant: str, agent: str, models: str, attempts: int) -> None:
    """One variant's loop in this process; prints {"cpu_ms", "rss_mb", "requests"}."""
    started = time.process_time()
    if variant == "floor":
        from floor import StdlibFloor

        asyncio.run(StdlibFloor(agent, models, attempts, 3, 8).played())
        requests = attempts * 7
    else:
        import httpx
        import msgspec

        transport: httpx.AsyncBaseTransport | None = None
        if variant == "httpx-aiohttp":
            from httpx_aiohttp import AiohttpTransport

            transport = AiohttpTransport(limits=httpx.Limits(max_connections=16))
        if variant == "kept":
            from convy.play.kept import KeptTransport

            transport = KeptTransport(False, keep=16)
        started = time.process_time()
        brief = {"role": "system", "content": "You are a customer of an online shop. " * 20}
        answered = 0

        async def post(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> str:
            nonlocal answered
            response = await client.post(
                url, content=msgspec.json.encode(body), headers={"Content-Type": "application/json"}
            )
            answered += response.status_code == 200
            return str(msgspec.json.decode(response.content)["choices"][0]["message"]["content"])

        async def conversation(client: httpx.AsyncClient, room: asyncio.Semaphore) -> None:
            async with room:
                dialogue: list[dict[str, str]] = []
                for _ in range(3):
                    said = await post(client, models, {"model": "bench", "messages": [brief, *dialogue]})
                    dialogue.append({"role": "user", "content": said})
                    answer = await post(client, agent, {"model": "bench", "messages": dialogue})
                    dialogue.append({"role": "assistant", "content": answer})
            transcript = "\n".join(m["content"] for m in dialogue)
            await post(
                client,
                models,
                {"model": "bench", "messages": [brief, {"role": "user", "content": transcript}]},
            )

        async def played() -> None:
            room = asyncio.Semaphore(8)
            async with httpx.AsyncClient(transport=transport) as client:
                await asyncio.gather(*(conversation(client, room) for _ in range(attempts)))

        asyncio.run(played())
        requests = answered
    cpu_ms = 1000 * (time.process_time() - started) / (attempts * 7)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.stdout.write(json.dumps({"cpu_ms": cpu_ms, "rss_mb": rss, "requests": requests}) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description="httpx's transports measured beside the floor")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--attempts", type=int, default=200)
    parser.add_argument("--child", nargs=3, metavar=("VARIANT", "AGENT", "MODELS"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        child(*arguments.child, arguments.attempts)
        return 0
    from servers import LatencyServers

    found: dict[str, list[dict[str, float]]] = {variant: [] for variant in VARIANTS}
    with LatencyServers(0.0) as servers:
        agent = servers.urls["agent"] + "/v1/chat/completions"
        models = servers.urls["models"] + "/v1/chat/completions"
        for _ in range(arguments.rounds):
            for variant in VARIANTS:
                done = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--attempts",
                        str(arguments.attempts),
                        "--child",
                        variant,
                        agent,
                        models,
                    ],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if done.returncode != 0:
                    sys.stdout.write(f"{variant}: failed: {done.stderr.strip().splitlines()[-1:]}\n")
                    continue
                found[variant].append(json.loads(done.stdout.strip().splitlines()[-1]))
    floor = sorted(r["cpu_ms"] for r in found["floor"])
    base = floor[len(floor) // 2] if floor else 0.0
    sys.stdout.write("variant        | CPU ms/req (after imports) | × floor | peak RSS MB\n")
    for variant, runs in found.items():
        if not runs:
            continue
        cpu = sorted(r["cpu_ms"] for r in runs)[len(runs) // 2]
        rss = sorted(r["rss_mb"] for r in runs)[len(runs) // 2]
        times = f"{cpu / base:.1f}" if base else "—"
        sys.stdout.write(f"{variant:14} | {cpu:.3f} | {times} | {rss:.1f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
