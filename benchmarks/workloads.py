"""The workloads: Play (a generated project played by the real `python -m convy run` against the
latency servers — workloads 1, 2, 2s, 3 and 6), Reading (two large run folders read, summed up,
compared and rendered by a child — workload 4) and Startup (a command's `--help` — workload 5); each
gives its Row."""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from measure import Child, Measured, Probe, Profile, Windows
from project import BenchProject, StoredRunFolder
from report import Row

from servers import Certificates, LatencyServers

HERE = Path(__file__).resolve().parent


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


class Beside:
    """Workload 7: convy beside the standard-library floor (floor.py), and beside the
    convy of another checkout's sources (`before`, on PYTHONPATH) when given, each played in turn in
    one run — small and large at L = 0, small at L = 100 ms (T = 3, C = 8), `runs` times each (the
    median kept) — so the machine's load moves them alike. Per player: the CPU per request with the
    start-up and the shut-down taken out, (CPU at `large` − CPU at `small`) / the extra requests; the
    peak RSS at `large`; wall over the ideal bound at 100 ms latency; and each as a ratio to the
    floor's."""

    TURNS = 3
    AT_ONCE = 8
    LATENCY = 0.1

    def __init__(self, number: str, small: int, large: int, runs: int, before: str = "") -> None:
        self.number = number
        self.small = small
        self.large = large
        self.runs = runs
        self.before = before

    HELD = "held"
    """The floor that holds the other conversations until the first agent request was answered, as
    convy does (a setup mistake plays one attempt): what that rule itself costs."""

    def players(self) -> list[tuple[str, str | None]]:
        """(name, convy's sources on PYTHONPATH: "" this one, None the floor, HELD the held floor)."""
        found: list[tuple[str, str | None]] = [("floor", None), ("held", self.HELD)]
        if self.before:
            found.append(("before", str(Path(self.before).resolve())))
        return [*found, ("convy", "")]

    def measured(self, servers: LatencyServers, folder: Path, attempts: int, source: str | None) -> Measured:
        play = Play(self.number, attempts, self.TURNS, servers.latency, self.AT_ONCE)
        environ = dict(Child.environ)
        if source and source != self.HELD:
            environ["PYTHONPATH"] = source
        if source is None or source == self.HELD:
            command = [
                sys.executable,
                str(HERE / "floor.py"),
                servers.urls["agent"] + "/v1/chat/completions",
                servers.urls["models"] + "/v1/chat/completions",
                str(attempts),
                str(self.TURNS),
                str(self.AT_ONCE),
                *(["--first-alone"] if source == self.HELD else []),
            ]
        else:
            project = BenchProject(folder / "project", 10, self.TURNS).write().folder
            command = play.command(servers, project, folder / "results", attempts // 10)
        measured = Child(command, folder, environ, servers.reset).measured()
        stats = servers.stats()
        measured.requests = stats["agent"]["requests"] + stats["models"]["requests"]
        arrivals = sorted(stats["agent"]["arrivals"] + stats["models"]["arrivals"])
        measured.fixed = (
            (stats["started"] + arrivals[0] - measured.began)
            + (measured.began + measured.wall - (stats["started"] + arrivals[-1] + servers.latency))
            if arrivals
            else 0.0
        )
        return measured

    def row(self) -> Row:
        players = self.players()
        kept: dict[tuple[str, str], list[Measured]] = {}
        settings = (
            ("small", self.small, 0.0),
            ("large", self.large, 0.0),
            ("latency", self.small, self.LATENCY),
        )
        with (
            LatencyServers(0.0) as fast,
            LatencyServers(self.LATENCY) as slow,
            tempfile.TemporaryDirectory() as temp,
        ):
            for run in range(self.runs):
                for setting, attempts, latency in settings:
                    for name, source in players:
                        here = Path(temp) / f"{name}-{setting}-{run}"
                        here.mkdir()
                        servers = slow if latency else fast
                        kept.setdefault((name, setting), []).append(
                            self.measured(servers, here, attempts, source)
                        )
        row = Row(self.number, f"beside the floor: A={self.small}/{self.large}, T=3, C=8, L=0 and 100ms")
        expected = {s: a * (2 * self.TURNS + 1) for s, a, _ in settings}
        figures: dict[str, dict[str, float]] = {}
        ideal = Play(self.number, self.small, self.TURNS, self.LATENCY, self.AT_ONCE).ideal(self.small)
        for name, _ in players:

            def median(setting: str, key: str, name: str = name) -> float:
                values = sorted(getattr(m, key) for m in kept[(name, setting)])
                return float(values[len(values) // 2])

            for setting, _, _ in settings:
                for m in kept[(name, setting)]:
                    row.done(
                        f"{name} {setting}: exit {m.code}, requests {m.requests}/{expected[setting]}",
                        m.code == 0 and m.requests == expected[setting],
                    )
            extra = expected["large"] - expected["small"]
            figures[name] = {
                "cpu_ms": 1000 * (median("large", "cpu") - median("small", "cpu")) / extra,
                "rss": median("large", "rss_mb"),
                "ratio": median("latency", "wall") / ideal,
                "fixed": median("latency", "fixed"),
                "small_cpu": median("small", "cpu"),
                "small_wall": median("small", "wall"),
            }
        floor = figures["floor"]
        lines = [
            f"{'':8} | CPU ms/req (start-up removed) | × floor | peak RSS MB (A={self.large}) | "
            f"wall/ideal L=100ms A={self.small} | start+end s | "
            f"CPU s A={self.small} L=0 | wall s A={self.small} L=0"
        ]
        for name, f in figures.items():
            lines.append(
                f"{name:8} | {f['cpu_ms']:.3f} | {f['cpu_ms'] / floor['cpu_ms']:.1f} | {f['rss']:.1f} | "
                f"{f['ratio']:.3f} | {f['fixed']:.3f} | {f['small_cpu']:.3f} | {f['small_wall']:.3f}"
            )
        row.notes.append(f"medians of {self.runs} runs, played in turn:\n     " + "\n     ".join(lines))
        mine = figures["convy"]
        row.figures.update(
            cpu_ms_net=mine["cpu_ms"],
            rss=mine["rss"],
            ratio=mine["ratio"],
            ideal=ideal,
            fixed=mine["fixed"],
            vs_floor=mine["cpu_ms"] / floor["cpu_ms"],
            floor_ratio=floor["ratio"],
            floor_cpu_ms=floor["cpu_ms"],
            held_ratio=figures["held"]["ratio"],
        )
        return row
