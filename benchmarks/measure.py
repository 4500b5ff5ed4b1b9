"""What the benchmark measures with: Child, a command run to its end as a child process and
Measured, what it cost (wait4: wall and CPU seconds, peak RSS); Probe, round trips that show the
latency servers answer on time; Windows, the most requests in any 60 s; Profile, a cProfile file's
top frames; Load, the machine's load average."""

from __future__ import annotations

import asyncio
import os
import ssl
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

MB = 1024.0  # ru_maxrss is in KiB on Linux


class Measured:
    """What one child process cost: wall and CPU seconds, peak RSS, exit code, its output's tail."""

    def __init__(
        self, wall: float, cpu: float, rss_mb: float, code: int, out: str, err: str, began: float = 0.0
    ) -> None:
        self.began = began
        self.requests = 0
        """The requests the servers saw from it (workload 7)."""
        self.fixed = 0.0
        """From its start to the first request, plus from the last answer to its exit (workload 7)."""
        self.wall = wall
        self.cpu = cpu
        self.rss_mb = rss_mb
        self.code = code
        self.out = out
        self.err = err


class Child:
    """A command run to its end as a child process, measured with wait4 (its own rusage only).
    `environ` (the class's) is every child's environment: this one's without CONVY_* and INPUT_*
    settings, and with bytecode cached in a folder of the benchmark's (Bytecode)."""

    environ: dict[str, str] = dict(os.environ)

    def __init__(
        self,
        command: list[str],
        folder: Path,
        environ: dict[str, str] | None = None,
        started: Callable[[int], None] | None = None,
    ) -> None:
        self._command = command
        self._folder = folder
        self._environ = environ if environ is not None else Child.environ
        self._started = started

    def measured(self) -> Measured:
        out_path, err_path = self._folder / "child.out", self._folder / "child.err"
        with out_path.open("wb") as out, err_path.open("wb") as err:
            began = time.monotonic()
            started = time.perf_counter()
            process = subprocess.Popen(
                self._command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=self._environ
            )
            if self._started is not None:
                self._started(process.pid)
            _, status, usage = os.wait4(process.pid, 0)
            wall = time.perf_counter() - started
            process.returncode = os.waitstatus_to_exitcode(status)
        return Measured(
            began=began,
            wall=wall,
            cpu=usage.ru_utime + usage.ru_stime,
            rss_mb=usage.ru_maxrss / MB,
            code=process.returncode,
            out=out_path.read_text(errors="replace"),
            err=err_path.read_text(errors="replace"),
        )


class Probe:
    """Round trips to the agent server on kept connections, to show the servers answer within about
    a millisecond of the latency asked for (server and loopback together)."""

    def __init__(
        self,
        url: str,
        latency: float,
        connections: int = 4,
        each: int = 10,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self._url = url
        self._tls = tls
        self._latency = latency
        self._connections = connections
        self._each = each

    def overheads_ms(self) -> list[float]:
        return sorted(asyncio.run(self._all()))

    async def _all(self) -> list[float]:
        lists = await asyncio.gather(*(self._one() for _ in range(self._connections)))
        return [x for found in lists for x in found]

    async def _one(self) -> list[float]:
        host, port = self._url.split("://")[1].split(":")
        reader, writer = await asyncio.open_connection(host, int(port), ssl=self._tls)
        body = b'{"model": "probe", "messages": [{"role": "user", "content": "ping"}]}'
        request = (
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        found: list[float] = []
        for _ in range(self._each):
            started = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            await reader.readexactly(length)
            found.append(1000 * (time.perf_counter() - started - self._latency))
        writer.close()
        return found


class Windows:
    """The most requests in any `window` seconds of a list of send moments, and the shortest span of
    `most + 1` consecutive requests (under `window`: the limit was exceeded)."""

    def __init__(self, moments: list[float], window: float = 60.0) -> None:
        self._moments = sorted(moments)
        self._window = window

    def most(self) -> int:
        best, start = 0, 0
        for end, moment in enumerate(self._moments):
            while self._moments[start] <= moment - self._window:
                start += 1
            best = max(best, end - start + 1)
        return best

    def shortest_span(self, count: int) -> tuple[float, int] | None:
        """The shortest time from a request to the `count`-th after it, and the first one's number."""
        m = self._moments
        if len(m) <= count:
            return None
        return min((m[i + count] - m[i], i) for i in range(len(m) - count))

    def moment(self, number: int) -> float:
        """When request `number` (0-based) arrived, from the first one."""
        return self._moments[number] - self._moments[0]


class Profile:
    """A cProfile file's top frames, by own time and by cumulative time."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def show(self, number: str) -> None:
        import io
        import pstats

        for order in ("tottime", "cumulative"):
            text = io.StringIO()
            pstats.Stats(str(self._path), stream=text).strip_dirs().sort_stats(order).print_stats(30)
            sys.stdout.write(f"\n--- workload {number}: top frames by {order} (cProfile) ---\n")
            sys.stdout.write(text.getvalue().split("\n", 6)[-1])


class Load:
    """The machine's load average: other work on it slows every figure above."""

    def text(self) -> str:
        return ", ".join(f"{value:.2f}" for value in os.getloadavg())
