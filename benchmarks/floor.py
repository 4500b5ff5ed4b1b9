"""The standard-library floor (workload 7): `python benchmarks/floor.py AGENT_URL MODELS_URL A T C
[--first-alone]` makes the requests convy makes for A attempts of T turns, C conversations at once,
with the standard library alone, so its start-up, CPU and memory are what any Python program must
spend on them. With `--first-alone` it also keeps convy's rule for a setup mistake: the run's first
agent request goes alone, the other conversations start once it was answered."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any


class StdlibFloor:
    """The standard-library floor: the same requests as HttpxFloor (and as convy makes them), made
    with asyncio's streams, HTTP/1.1 with keep-alive (an idle connection of the same server reused,
    else a new one) and the json module. Measured as a whole process from outside, as convy is
    (workload 7): what any Python program must spend to make these requests."""

    def __init__(
        self, agent: str, models: str, attempts: int, turns: int, concurrency: int, first_alone: bool = False
    ) -> None:
        self._first_alone = first_alone
        self._answered = asyncio.Event()
        self._agent = agent
        self._models = models
        self._attempts = attempts
        self._turns = turns
        self._concurrency = concurrency
        self._idle: dict[tuple[str, int], list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]] = {}

    async def post(self, url: str, body: dict[str, Any]) -> str:
        host, _, rest = url.split("://")[1].partition(":")
        port, _, path = rest.partition("/")
        place = (host, int(port))
        idle = self._idle.setdefault(place, [])
        reader, writer = idle.pop() if idle else await asyncio.open_connection(*place)
        data = json.dumps(body).encode()
        writer.write(
            b"POST /%s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
            % (path.encode(), host.encode(), len(data), data)
        )
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        answer = json.loads(await reader.readexactly(length))
        idle.append((reader, writer))
        return str(answer["choices"][0]["message"]["content"])

    async def conversation(self, room: asyncio.Semaphore, first: bool) -> None:
        brief = {"role": "system", "content": "You are a customer of an online shop. " * 20}
        if self._first_alone and not first:
            await self._answered.wait()
        async with room:
            dialogue: list[dict[str, str]] = []
            for _ in range(self._turns):
                said = await self.post(self._models, {"model": "bench", "messages": [brief, *dialogue]})
                dialogue.append({"role": "user", "content": said})
                answer = await self.post(self._agent, {"model": "bench", "messages": dialogue})
                self._answered.set()
                dialogue.append({"role": "assistant", "content": answer})
        transcript = "\n".join(m["content"] for m in dialogue)
        await self.post(
            self._models, {"model": "bench", "messages": [brief, {"role": "user", "content": transcript}]}
        )

    async def played(self) -> None:
        room = asyncio.Semaphore(self._concurrency)
        await asyncio.gather(*(self.conversation(room, i == 0) for i in range(self._attempts)))
        for idle in self._idle.values():
            for _, writer in idle:
                writer.close()

    def run(self) -> None:
        asyncio.run(self.played())


if __name__ == "__main__":
    agent, models, attempts, turns, concurrency = sys.argv[1:6]
    alone = sys.argv[6:] == ["--first-alone"]
    StdlibFloor(agent, models, int(attempts), int(turns), int(concurrency), alone).run()
