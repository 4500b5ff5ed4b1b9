"""convy's speed and memory benchmark: `python benchmarks/run.py [--quick] [--only N] [--profile]`.

Starts its own latency servers (benchmarks/servers.py) in a separate process, plays a generated
project (benchmarks/project.py) against them with the real `python -m convy run` in a subprocess,
reads, sums up, compares and renders two large run folders, times the commands' start-up, and
prints one table. See benchmarks/README.md for what each column means and the targets."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from project import BenchProject, StoredRunFolder  # noqa: E402

MB = 1024.0  # ru_maxrss is in KiB on Linux


class Measured:
    """What one child process cost: wall and CPU seconds, peak RSS, exit code, its output's tail."""

    def __init__(
        self, wall: float, cpu: float, rss_mb: float, code: int, out: str, err: str, began: float = 0.0
    ) -> None:
        self.began = began
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


class Certificates:
    """A certificate authority of the benchmark's own and a server certificate for 127.0.0.1 it
    signed, made with the openssl command in `folder`; `ca` is what clients trust (SSL_CERT_FILE)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.ca = folder / "ca.pem"
        self.cert = folder / "server.pem"
        self.key = folder / "server.key"

    def made(self) -> Certificates:
        if shutil.which("openssl") is None:
            raise RuntimeError("the https workloads need the openssl command")
        self.folder.mkdir(parents=True, exist_ok=True)
        key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        self.openssl(
            "req",
            "-x509",
            *key,
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=convy benchmark CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        )
        self.openssl("req", *key, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
        (self.folder / "server.ext").write_text(
            "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n"
            "keyUsage=critical,digitalSignature,keyEncipherment\n"
        )
        self.openssl(
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        )
        return self

    def openssl(self, *arguments: str) -> None:
        subprocess.run(["openssl", *arguments], cwd=self.folder, check=True, capture_output=True)

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))


class LatencyServers:
    """benchmarks/servers.py in its own process, answering after `latency` seconds (over HTTPS with
    `tls`'s server certificate when given)."""

    def __init__(self, latency: float, tls: Certificates | None = None) -> None:
        self.latency = latency
        self.tls = tls
        self._process: subprocess.Popen[bytes] | None = None
        self.urls: dict[str, str] = {}

    def __enter__(self) -> LatencyServers:
        tls = ["--tls", str(self.tls.cert), str(self.tls.key)] if self.tls else []
        self._process = subprocess.Popen(
            [sys.executable, str(HERE / "servers.py"), "--latency", str(self.latency), *tls],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self._process.stdout is not None
        self.urls = json.loads(self._process.stdout.readline())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def stats(self) -> dict[str, Any]:
        context = self.tls.context() if self.tls else None
        with urllib.request.urlopen(self.urls["models"] + "/stats", timeout=10, context=context) as response:
            return json.loads(response.read())

    def reset(self, pid: int = 0) -> None:
        """Start counting afresh; `pid` is the process whose CPU time at its first request is kept."""
        body = json.dumps({"pid": pid}).encode()
        request = urllib.request.Request(self.urls["models"] + "/reset", data=body, method="POST")
        with urllib.request.urlopen(request, timeout=10, context=self.tls.context() if self.tls else None):
            pass


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


class Row:
    """One line of the table; a figure not measured for a workload is None (shown as —).
    `checks` are the targets (how fast, how much: PASS / MISS, never the exit code); `complete` is
    whether the workload did all its work (DONE / FAIL: any FAIL makes the benchmark exit 1)."""

    def __init__(self, number: str, name: str, **figures: Any) -> None:
        self.number = number
        self.name = name
        self.figures = figures
        self.notes: list[str] = []
        self.checks: list[tuple[str, bool | None]] = []
        self.complete: list[tuple[str, bool]] = []

    def check(self, what: str, met: bool | None) -> None:
        self.checks.append((what, met))

    def done(self, what: str, met: bool) -> None:
        self.complete.append((what, met))


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


class Play:
    """A workload played with the real command: `attempts` (`scenarios` scenarios × repeat), `turns`
    turns, `latency` seconds per call, `concurrency` conversations at once, `rpm` model requests a
    minute; over HTTPS with `tls` (the child trusts its CA through SSL_CERT_FILE)."""

    def __init__(
        self,
        number: str,
        attempts: int,
        turns: int,
        latency: float,
        concurrency: int,
        rpm: int = 0,
        profile: bool = False,
        runs: int = 1,
        tls: Certificates | None = None,
        scenarios: int = 10,
    ) -> None:
        self.runs = runs
        self.number = number
        self.attempts = attempts
        self.turns = turns
        self.latency = latency
        self.concurrency = concurrency
        self.rpm = rpm
        self.profile = profile
        self.tls = tls
        self.scenarios = scenarios

    @property
    def name(self) -> str:
        limit = f", {self.rpm} rpm" if self.rpm else ""
        scheme = " https" if self.tls else ""
        return (
            f"play{scheme} A={self.attempts} T={self.turns} L={self.latency * 1000:g}ms "
            f"C={self.concurrency}{limit}"
        )

    def environ(self) -> dict[str, str]:
        return {**Child.environ, "SSL_CERT_FILE": str(self.tls.ca)} if self.tls else Child.environ

    def command(self, servers: LatencyServers, project: Path, results: Path, repeat: int) -> list[str]:
        command = [
            sys.executable,
            "-m",
            "convy",
            "run",
            "--project",
            str(project),
            "--agent-url",
            servers.urls["agent"] + "/v1/chat/completions",
            "--model-url",
            servers.urls["models"] + "/v1",
            "--user-model",
            "bench",
            "--repeat",
            str(repeat),
            "--concurrency",
            str(self.concurrency),
            "--results",
            str(results),
        ]
        if self.rpm:
            command += ["--model-rpm", str(self.rpm)]
        return command

    def played(
        self, servers: LatencyServers, folder: Path, repeat: int, profile: Path | None = None
    ) -> Measured:
        """One run of convy; the servers count afresh from its start and keep its CPU time at its
        first request (its start-up)."""
        project = BenchProject(folder / "project", self.scenarios, self.turns).write().folder
        command = self.command(servers, project, folder / "results", repeat)
        if profile is not None:
            command[1:3] = ["-m", "cProfile", "-o", str(profile), "-m", "convy"]
        return Child(command, folder, self.environ(), servers.reset).measured()

    def ideal(self, attempts: int) -> float:
        """convy's own schedule: at most C conversations at once, each 2T calls in sequence (T user
        turns, T agent answers); a conversation's judge call overlaps the next conversation, so only
        the last judge call adds to the chain."""
        rounds = math.ceil(attempts / self.concurrency)
        return rounds * 2 * self.turns * self.latency + self.latency

    def row(self) -> Row:
        repeat = self.attempts // self.scenarios
        attempts = repeat * self.scenarios
        with LatencyServers(self.latency, self.tls) as servers, tempfile.TemporaryDirectory() as temp:
            folder = Path(temp)
            context = self.tls.context() if self.tls else None
            probe = Probe(servers.urls["agent"], self.latency, tls=context).overheads_ms()
            tries: list[tuple[Measured, dict[str, Any], dict[str, int]]] = []
            for number in range(self.runs):
                here = folder / f"try{number}"
                here.mkdir()
                played = self.played(servers, here, repeat)
                tries.append((played, servers.stats(), self.outcomes(here / "results")))
            tries.sort(key=lambda found: found[0].wall)
            measured, stats, outcomes = tries[len(tries) // 2]
            floor: dict[str, Any] | None = None
            if self.latency == 0:
                servers.reset()
                floor_run = Child(
                    [
                        sys.executable,
                        str(HERE / "run.py"),
                        "--httpx-floor",
                        servers.urls["agent"] + "/v1/chat/completions",
                        servers.urls["models"] + "/v1/chat/completions",
                        str(attempts),
                        str(self.turns),
                        str(self.concurrency),
                    ],
                    folder,
                    self.environ(),
                ).measured()
                floor = (
                    json.loads(floor_run.out.strip().splitlines()[-1])
                    if floor_run.code == 0
                    else {"error": self.last_line(floor_run.err)}
                )
            if self.profile:
                (folder / "profiled").mkdir()
                self.played(servers, folder / "profiled", repeat, folder / "profile.out")
                Profile(folder / "profile.out").show(self.number)
        agent, models = stats["agent"], stats["models"]
        requests = agent["requests"] + models["requests"]
        expected = attempts * (2 * self.turns + 1)
        peers = math.ceil(attempts / self.concurrency) * (2 * self.turns + 1) * self.latency
        chain = self.ideal(attempts)
        ideal = max(chain, models["requests"] / self.rpm * 60) if self.rpm else chain
        arrivals = sorted(agent["arrivals"] + models["arrivals"])
        span = (arrivals[-1] - arrivals[0] + self.latency) if arrivals else None
        before = stats.get("client_cpu_before_first")
        row = Row(
            self.number,
            self.name,
            wall=measured.wall,
            ideal=ideal if ideal > 0 else None,
            ratio=measured.wall / ideal if ideal > 0 else None,
            span_ratio=span / ideal if ideal > 0 and span else None,
            cpu=measured.cpu,
            cpu_ms=1000 * measured.cpu / requests if requests else None,
            rss=measured.rss_mb,
            requests=f"{requests} ({agent['requests']}+{models['requests']})",
            peak=f"{agent['peak_in_flight']}/{models['peak_in_flight']}",
        )
        row.notes.append(
            f"servers: probe answered L+{probe[len(probe) // 2]:.2f} ms (p50), L+{probe[-1]:.2f} ms (max) "
            f"round trip; during the run late by p50 {self.ms(agent['late_ms']['p50'])}, "
            f"max {self.ms(max(agent['late_ms']['max'] or 0, models['late_ms']['max'] or 0))}; "
            f"server CPU {stats['cpu_seconds']:.2f} s; a request's body came "
            f"{self.ms(agent['body_wait_ms']['p50'])} (p50), {self.ms(agent['body_wait_ms']['max'])} (max) "
            "after its headers (agent)"
        )
        row.notes.append(
            f"attempts {sum(outcomes.values())}/{attempts} "
            f"({', '.join(f'{k} {v}' for k, v in outcomes.items())}); "
            f"requests {requests}/{expected}; agent connections {agent['connections']}, "
            f"model connections {models['connections']}; convy exit code {measured.code}"
            + (f" ({self.last_line(measured.err)})" if measured.code else "")
        )
        row.done(f"convy exited 0 (exit code {measured.code})", measured.code == 0)
        row.done(
            f"every request made: agent {agent['requests']}/{attempts * self.turns}, "
            f"models {models['requests']}/{attempts * (self.turns + 1)}",
            agent["requests"] == attempts * self.turns and models["requests"] == attempts * (self.turns + 1),
        )
        row.done(
            f"every attempt judged: {outcomes.get('verdict', 0)}/{attempts} verdicts",
            outcomes.get("verdict", 0) == attempts and sum(outcomes.values()) == attempts,
        )
        row.done(
            f"no request the servers could not read ({agent['bad'] + models['bad']})",
            not agent["bad"] + models["bad"],
        )
        tokens = models["prompt_tokens"]
        row.notes.append(
            "prompt tokens per attempt (model server's estimate): "
            f"user {tokens.get('user', 0) / attempts:.0f}, "
            f"judge {tokens.get('judge', 0) / attempts:.0f}, "
            f"agent {agent['prompt_tokens'].get('agent', 0) / attempts:.0f}"
        )
        if self.latency > 0:
            row.notes.append(
                f"the ideal is convy's own schedule, ceil(A/C)·2T·L + L = {chain:.3f} s (a judge call "
                f"overlaps the next conversation); one call after another, ceil(A/C)·(2T+1)·L = {peers:.3f} s"
            )
        if len(tries) > 1:
            walls = ", ".join(f"{found[0].wall:.3f}" for found in tries)
            cpus = ", ".join(f"{found[0].cpu:.3f}" for found in tries)
            row.notes.append(f"{len(tries)} runs, the median one shown; wall s {walls}; CPU s {cpus}")
        if span:
            first = stats["started"] + arrivals[0] - measured.began
            after = measured.began + measured.wall - (stats["started"] + arrivals[-1] + self.latency)
            row.notes.append(
                f"play span at the servers (first request to last answer) {span:.2f} s; "
                f"process start to first request {first:.3f} s, last answer to exit {after:.3f} s: "
                f"start-up + shut-down {first + after:.3f} s"
            )
            row.figures["before_first"] = first
            row.figures["after_last"] = after
            row.figures["fixed"] = first + after
        if before is not None and requests:
            net = 1000 * (measured.cpu - before) / requests
            row.notes.append(
                f"CPU minus start-up: {measured.cpu:.3f} s in all, {before:.3f} s before the first request "
                f"(read from /proc when it arrived): {net:.3f} ms per request"
            )
            row.figures["cpu_ms_net"] = net
        if floor is not None:
            if "error" in floor:
                row.done(f"the bare httpx loop ran ({floor['error']})", False)
            else:
                row.done(
                    f"the bare httpx loop made every request ({floor['requests']}/{expected})",
                    floor["requests"] == expected,
                )
                row.figures["httpx_floor"] = floor["cpu_ms"]
                mine = row.figures.get("cpu_ms_net")
                ratio = f"; convy / httpx = {mine / floor['cpu_ms']:.2f}" if mine and floor["cpu_ms"] else ""
                row.notes.append(
                    f"a bare httpx loop (one shared AsyncClient, the same {floor['requests']} requests in "
                    f"the same pattern, C conversations at once), after its imports: "
                    f"{floor['cpu_ms']:.3f} ms CPU per request{ratio}"
                )
                if mine and floor["cpu_ms"]:
                    row.figures["vs_httpx"] = mine / floor["cpu_ms"]
        if self.tls:
            row.notes.append(
                f"TLS handshakes at the servers: agent {agent['handshakes']}, models {models['handshakes']} "
                f"(for {attempts} conversations, {self.concurrency} at once)"
            )
            row.figures["handshakes"] = (agent["handshakes"], models["handshakes"])
        if self.rpm:
            self.rate_checks(row, models, measured.wall, chain)
        return row

    def rate_checks(self, row: Row, models: dict[str, Any], wall: float, chain: float) -> None:
        windows = Windows(models["arrivals"])
        most = windows.most()
        span = windows.shortest_span(self.rpm)
        q = models["requests"]
        row.check(f"at most {self.rpm} model requests in any 60 s window (saw {most})", most <= self.rpm)
        bound = q / self.rpm * 60
        row.check(
            f"wall within 5% of Q/R = {q}/{self.rpm} min = {bound:.1f} s", abs(wall / bound - 1) <= 0.05
        )
        window_bound = (math.ceil(q / self.rpm) - 1) * 60
        if span is not None:
            seconds, first = span
            row.notes.append(
                f"shortest span of {self.rpm + 1} consecutive model requests at the server: {seconds:.3f} s, "
                f"from request #{first + 1} (at {windows.moment(first):.3f} s) to "
                f"#{first + self.rpm + 1} (at {windows.moment(first + self.rpm):.3f} s); "
                f"the first {self.rpm} arrived within {windows.moment(self.rpm - 1):.2f} s"
            )
        row.notes.append(
            f"a sliding 60 s window allows {self.rpm} at once, so {q} requests can finish after "
            f"{window_bound:.0f} s + the chain time ({chain:.2f} s); Q/R is reached only by pacing "
            f"(one request every {60 / self.rpm:.3f} s)"
        )

    def ms(self, value: float | None) -> str:
        return "—" if value is None else f"{value:.2f} ms"

    def last_line(self, text: str) -> str:
        lines = [line for line in text.strip().splitlines() if line.strip()]
        return lines[-1][:160] if lines else ""

    def outcomes(self, results: Path) -> dict[str, int]:
        found: dict[str, int] = {}
        for path in results.glob("*/*/attempts.jsonl"):
            for line in path.read_bytes().splitlines():
                if line.strip():
                    kind = json.loads(line)["decision"]["type"]
                    found[kind] = found.get(kind, 0) + 1
        return found


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


class Reading:
    """Workload 4: two run folders of `attempts` each, read, summed up, compared, gated and rendered
    (markdown, HTML) by a child process; seconds and peak RSS."""

    def __init__(self, number: str, attempts: int, compare_with: int | None = None) -> None:
        self.number = number
        self.attempts = attempts
        self.compare_with = compare_with

    def measured(self, folder: Path, attempts: int) -> tuple[Measured, dict[str, Any]]:
        scenarios = 50
        repeat = attempts // scenarios
        now = StoredRunFolder(
            folder / "results" / "bench" / "20260102T000000Z-now0", scenarios, repeat, 1, 0.3
        )
        before = StoredRunFolder(folder / "results" / "bench" / "20260101T000000Z-base", scenarios, repeat, 2)
        now.write()
        before.write()
        size = (now.folder / "attempts.jsonl").stat().st_size
        child = Child(
            [sys.executable, str(HERE / "run.py"), "--read-runs", str(now.folder), str(before.folder)], folder
        )
        measured = child.measured()
        if measured.code != 0:
            raise RuntimeError(f"reading failed: {measured.err[-2000:]}")
        steps = json.loads(measured.out.strip().splitlines()[-1])
        steps["size_mb"] = size / 1e6
        return measured, steps

    def row(self) -> Row:
        name = f"read+sum+compare+render 2×{self.attempts:,} attempts"
        with tempfile.TemporaryDirectory() as temp:
            try:
                measured, steps = self.measured(Path(temp) / "big", self.attempts)
                small: tuple[Measured, dict[str, Any]] | None = None
                if self.compare_with:
                    small = self.measured(Path(temp) / "small", self.compare_with)
            except RuntimeError as error:
                row = Row(self.number, name)
                row.done(f"read and rendered ({str(error).strip().splitlines()[-1][:200]})", False)
                return row
        row = Row(self.number, name, wall=measured.wall, cpu=measured.cpu, rss=measured.rss_mb)
        row.done(
            f"every step done: comment {steps['markdown_chars']:,} characters, pages {steps['html_chars']:,}",
            all(isinstance(v, float) for v in steps["seconds"].values())
            and steps["markdown_chars"] > 0
            and steps["html_chars"] > 0,
        )
        shown = ", ".join(
            f"{name} {value:.3f} s" if isinstance(value, float) else f"{name} {value}"
            for name, value in steps["seconds"].items()
        )
        row.notes.append(f"steps (in the child, after start-up {steps['startup']:.3f} s): {shown}")
        row.notes.append(
            f"attempts.jsonl {steps['size_mb']:.1f} MB each; RSS after each step (MB): "
            + ", ".join(f"{k} {v:.0f}" for k, v in steps["rss_mb"].items())
        )
        if small is not None:
            growth = (measured.rss_mb - small[0].rss_mb) / (self.attempts - self.compare_with) * 1000
            row.notes.append(
                f"peak RSS with 2×{self.compare_with:,} attempts {small[0].rss_mb:.1f} MB, "
                f"with 2×{self.attempts:,} {measured.rss_mb:.1f} MB: "
                f"{growth * 1024:.0f} KB more per 1,000 attempts a run"
            )
            row.figures["growth_kb"] = growth * 1024
        return row


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
        from convy.draw.markdown import Links
        from convy.run.review import Reviewed
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
                html += ComparisonPage(comparison, decision).html()
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


class Startup:
    """Workload 5: the best of `tries` wall times of a `--help`."""

    def __init__(
        self, number: str, label: str, command: list[str], module: str | None, tries: int, cold: bool = False
    ) -> None:
        self.cold = cold
        self.number = number
        self.label = label
        self.command = command
        self.module = module
        self.tries = tries

    def row(self) -> Row:
        import importlib.util

        if self.module is not None and importlib.util.find_spec(self.module) is None:
            row = Row(self.number, f"start-up: {self.label}")
            row.notes.append(f"n/a: no module {self.module}")
            row.check("start-up under 0.3 s", None)
            return row
        best: Measured | None = None
        with tempfile.TemporaryDirectory() as temp:
            for _ in range(self.tries):
                measured = Child(self.command, Path(temp)).measured()
                if measured.code != 0:
                    row = Row(self.number, f"start-up: {self.label}")
                    row.done(f"exited 0 (exit code {measured.code}: {measured.err.strip()[-200:]})", False)
                    row.check("start-up under 0.3 s", False)
                    return row
                if best is None or measured.wall < best.wall:
                    best = measured
        assert best is not None
        row = Row(self.number, f"start-up: {self.label}", wall=best.wall, cpu=best.cpu, rss=best.rss_mb)
        row.done("exited 0", True)
        row.check("start-up under 0.3 s", best.wall < 0.3)
        if self.cold:
            with tempfile.TemporaryDirectory() as temp:
                environ = dict(os.environ)
                cold = min(
                    Child(self.command, Path(temp), environ).measured().wall for _ in range(self.tries)
                )
            flag = os.environ.get("PYTHONDONTWRITEBYTECODE", "")
            row.notes.append(
                f"in this environment as it is (PYTHONDONTWRITEBYTECODE={flag!r}: modules without "
                f"cached bytecode compiled at each start): best {cold:.3f} s"
            )
        return row


class Bytecode:
    """Compiled modules cached where the benchmark's children find them, as an installed convy has
    them: this environment may say PYTHONDONTWRITEBYTECODE, which would make every child compile
    convy's own modules again (about 0.1 s of each start). The cache lives in `folder`
    (PYTHONPYCACHEPREFIX), so nothing is written next to the sources."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder

    def environ(self) -> dict[str, str]:
        kept = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CONVY_", "INPUT_")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        return {**kept, "PYTHONPYCACHEPREFIX": str(self._folder)}

    def warm(self) -> None:
        """Fill the cache: the commands' start, one small play, one small reading."""
        with tempfile.TemporaryDirectory() as temp:
            folder = Path(temp)
            for command in (["convy", "--help"], ["convy", "run", "--help"], ["convy_action", "--help"]):
                Child([sys.executable, "-m", *command], folder).measured()
            with LatencyServers(0.0) as servers:
                Play("warm-up", 10, 1, 0.0, 8).played(servers, folder, 1)
            Reading("warm-up", 100).measured(folder / "reading", 100)


class Table:
    """The rows, printed as one table, then each row's checks and notes."""

    COLUMNS = (
        ("#", None),
        ("workload", None),
        ("wall s", "wall"),
        ("ideal s", "ideal"),
        ("wall/ideal", "ratio"),
        ("span/ideal", "span_ratio"),
        ("CPU s", "cpu"),
        ("CPU ms/req", "cpu_ms"),
        ("minus start-up", "cpu_ms_net"),
        ("httpx ms/req", "httpx_floor"),
        ("÷ httpx", "vs_httpx"),
        ("start+end s", "fixed"),
        ("peak RSS MB", "rss"),
        ("requests (agent+model)", "requests"),
        ("peak in flight agent/model", "peak"),
    )

    def __init__(self, rows: list[Row]) -> None:
        self._rows = rows

    def cell(self, value: Any) -> str:
        if value is None:
            return "—"
        if isinstance(value, float):
            return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
        return str(value)

    def text(self) -> str:
        lines = [[title for title, _ in self.COLUMNS]]
        for row in self._rows:
            cells = [row.number, row.name]
            cells += [self.cell(row.figures.get(key)) for _, key in self.COLUMNS[2:] if key]
            lines.append(cells)
        widths = [max(len(line[i]) for line in lines) for i in range(len(self.COLUMNS))]
        rendered = [" | ".join(cell.ljust(width) for cell, width in zip(line, widths)) for line in lines]
        rendered.insert(1, "-+-".join("-" * width for width in widths))
        out = "\n".join(rendered) + "\n"
        for row in self._rows:
            out += f"\n{row.number}. {row.name}\n"
            for what, done in row.complete:
                out += f"   [{'DONE' if done else 'FAIL'}] {what}\n"
            for what, met in row.checks:
                mark = "n/a " if met is None else ("PASS" if met else "MISS")
                out += f"   [{mark}] {what}\n"
            for note in row.notes:
                out += f"   - {note}\n"
        return out


class Targets:
    """The targets, checked on the rows that measure them (how fast and how much: never the exit
    code, since a shared machine's load moves every figure)."""

    def apply(self, rows: list[Row]) -> None:
        for row in rows:
            f = row.figures
            if row.number in ("1", "6") and f.get("ratio") is not None:
                row.check("wall/ideal ≤ 1.10 (process wall, start-up included)", f["ratio"] <= 1.10)
                if f.get("span_ratio") is not None:
                    row.check("span/ideal ≤ 1.10 (the play alone, at the servers)", f["span_ratio"] <= 1.10)
                row.check("peak RSS ≤ 80 MB", f["rss"] <= 80)
            if row.number == "6" and f.get("fixed") is not None:
                row.check("start-up + shut-down ≤ 0.18 s", f["fixed"] <= 0.18)
            if row.number == "2" and f.get("cpu_ms_net") is not None:
                row.check(
                    "CPU ≤ 0.8 ms per HTTP request (whole process minus start-up)", f["cpu_ms_net"] <= 0.8
                )
                row.check("peak RSS ≤ 80 MB", f["rss"] <= 80)
            if row.number == "2s" and f.get("handshakes") is not None:
                agent, models = f["handshakes"]
                at_once = int(row.name.split(" C=")[1].split(",")[0])
                row.check(
                    f"no TLS handshake where a kept connection could serve: agent {agent} ≤ C = {at_once}, "
                    f"models {models} ≤ 2C = {2 * at_once}",
                    agent <= at_once and models <= 2 * at_once,
                )
            if row.number == "4" and f.get("wall") is not None:
                row.check("under 2 s (child process wall)", f["wall"] < 2.0)
                row.check("peak RSS under 250 MB", f["rss"] < 250)


class Benchmark:
    """The workloads, full size or quick (seconds: every workload still does all its requests)."""

    def __init__(self, quick: bool, only: set[str], profile: bool, tls: Certificates) -> None:
        self._quick = quick
        self._only = only
        self._profile = profile
        self._tls = tls

    def rows(self) -> Iterator[Row]:
        quick = self._quick
        python = sys.executable
        script = Path(python).with_name("convy")
        tries = 1 if quick else 5
        workloads: list[tuple[str, Callable[[], Row]]] = [
            (
                "1",
                lambda: Play(
                    "1",
                    10 if quick else 40,
                    3,
                    0.02 if quick else 0.1,
                    8,
                    runs=1 if quick else 3,
                    profile=self._profile,
                ).row(),
            ),
            ("2", lambda: Play("2", 20 if quick else 200, 3, 0.0, 8, profile=self._profile).row()),
            ("2s", lambda: Play("2s", 20 if quick else 200, 3, 0.0, 8, tls=self._tls).row()),
            (
                "3",
                lambda: Play(
                    "3",
                    10 if quick else 200,
                    1 if quick else 3,
                    0.01 if quick else 0.05,
                    16,
                    rpm=600 if quick else 400,
                ).row(),
            ),
            ("4", lambda: Reading("4", 100 if quick else 10_000, None if quick else 1_000).row()),
            (
                "5",
                lambda: Startup(
                    "5a", "python -m convy --help", [python, "-m", "convy", "--help"], None, tries, not quick
                ).row(),
            ),
            ("5", lambda: Startup("5b", "convy --help", [str(script), "--help"], None, tries).row()),
            (
                "5",
                lambda: Startup(
                    "5c",
                    "python -m convy_action --help",
                    [python, "-m", "convy_action", "--help"],
                    "convy_action.__main__",
                    tries,
                ).row(),
            ),
            (
                "5",
                lambda: Startup(
                    "5d",
                    "python -c pass (interpreter alone, for reference)",
                    [python, "-c", "pass"],
                    None,
                    tries,
                ).row(),
            ),
            (
                "6",
                lambda: Play(
                    "6", 12, 3, 0.02 if quick else 0.1, 8, runs=1 if quick else 5, scenarios=4
                ).row(),
            ),
        ]
        for number, make in workloads:
            if self._only and number not in self._only:
                continue
            started = time.perf_counter()
            row = make()
            sys.stderr.write(
                f"benchmark: workload {row.number} done in {time.perf_counter() - started:.1f} s\n"
            )
            yield row


def main() -> int:
    parser = argparse.ArgumentParser(description="convy's speed and memory benchmark")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small workloads (seconds): checks every workload does all its work",
    )
    parser.add_argument(
        "--only", action="append", default=[], metavar="N", help="run only workload N (repeatable)"
    )
    parser.add_argument("--profile", action="store_true", help="also profile workloads 1 and 2 with cProfile")
    parser.add_argument(
        "--as-is",
        action="store_true",
        help="run the children in this environment as it is (no bytecode cache of the benchmark's)",
    )
    parser.add_argument(
        "--stub-sniffio",
        action="store_true",
        help="experiment: children start with sys.modules['sniffio'] = None, so httpcore stops trying to "
        "import the missing sniffio on every request",
    )
    parser.add_argument("--httpx-floor", nargs=5, metavar="X", help=argparse.SUPPRESS)
    parser.add_argument("--read-runs", nargs=2, metavar=("NOW", "BASE"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.httpx_floor:
        agent, models, attempts, turns, concurrency = arguments.httpx_floor
        HttpxFloor(agent, models, int(attempts), int(turns), int(concurrency)).run()
        return 0
    if arguments.read_runs:
        ReadRuns(Path(arguments.read_runs[0]), Path(arguments.read_runs[1])).run()
        return 0
    try:
        import convy  # noqa: F401
    except ImportError:
        sys.stderr.write("benchmark: convy is not importable: run with the project's virtual environment\n")
        return 2
    sys.stderr.write(f"benchmark: load average before {Load().text()}\n")
    with tempfile.TemporaryDirectory() as cache:
        if arguments.as_is:
            Child.environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_"))}
        else:
            bytecode = Bytecode(Path(cache) / "bytecode")
            Child.environ = bytecode.environ()
        if arguments.stub_sniffio:
            stub = Path(cache) / "stub"
            stub.mkdir()
            (stub / "sitecustomize.py").write_text("import sys\n\nsys.modules.setdefault('sniffio', None)\n")
            Child.environ["PYTHONPATH"] = str(stub)
        if not arguments.as_is:
            started = time.perf_counter()
            bytecode.warm()
            sys.stderr.write(f"benchmark: bytecode cache warmed in {time.perf_counter() - started:.1f} s\n")
        tls = Certificates(Path(cache) / "tls").made()
        rows = list(Benchmark(arguments.quick, set(arguments.only), arguments.profile, tls).rows())
    if not arguments.quick:
        Targets().apply(rows)
    sys.stdout.write(Table(rows).text())
    if arguments.quick:
        sys.stdout.write("\nquick: the workloads are too small for the targets, which are not checked\n")
    sys.stdout.write(
        f"\nload average (1, 5, 15 min) after: {Load().text()} on {os.cpu_count()} CPUs"
        + (
            " — children ran with sys.modules['sniffio'] = None (--stub-sniffio)"
            if arguments.stub_sniffio
            else ""
        )
        + "\n"
    )
    failed = [f"{row.number}: {what}" for row in rows for what, done in row.complete if not done]
    if failed:
        sys.stdout.write(
            "\nbenchmark: some workloads did not do all their work:\n  " + "\n  ".join(failed) + "\n"
        )
        return 1
    return 0


class Load:
    """The machine's load average: other work on it slows every figure above."""

    def text(self) -> str:
        return ", ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
