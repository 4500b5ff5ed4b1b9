"""convy's speed and memory benchmark: `python benchmarks/run.py [--quick] [--only N] [--profile]`.

Starts its own latency servers (benchmarks/servers.py) in a separate process, plays a generated
project (benchmarks/project.py) against them with the real `python -m convy run` in a subprocess,
reads, sums up, compares and renders two large run folders, times the commands' start-up, and
prints one table. See benchmarks/README.md for what each column means and the targets.

The parts: workloads.py (what is played, read and started, each giving a Row), servers.py (the
latency servers and their process), measure.py (a child process measured, the probe, the
windows), report.py (the table and the targets), children.py (the child side of workloads 2 and
4); this file holds the list of workloads, the bytecode cache and the command."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from children import HttpxFloor, ReadRuns  # noqa: E402
from measure import Child, Load  # noqa: E402
from report import Row, Table, Targets  # noqa: E402
from workloads import Beside, Play, Reading, Startup  # noqa: E402

from servers import Certificates, LatencyServers  # noqa: E402


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


class Benchmark:
    """The workloads, full size or quick (seconds: every workload still does all its requests)."""

    def __init__(
        self, quick: bool, only: set[str], profile: bool, tls: Certificates, before: str = ""
    ) -> None:
        self._before = before
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
            (
                "7",
                lambda: Beside(
                    "7", 10 if quick else 40, 20 if quick else 200, 1 if quick else 5, self._before
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
    parser.add_argument(
        "--before",
        metavar="SRC",
        help="workload 7 also plays the convy whose sources are in SRC (another checkout's src/), "
        "interleaved with this one and the floor",
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
        rows = list(
            Benchmark(
                arguments.quick, set(arguments.only), arguments.profile, tls, arguments.before or ""
            ).rows()
        )
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


if __name__ == "__main__":
    sys.exit(main())
