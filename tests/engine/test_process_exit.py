"""The command's process ends quickly (decision 60): once the run is ready to play, what the
process holds is kept out of the cyclic collector's passes, and at its end the interpreter's shutdown
does not walk every object again; nothing it wrote or printed is lost for it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.command import convy, only_run

SETTLED = """
import gc
from convy.tools import Startup
before = gc.get_freeze_count()
Startup().settled()
print(before, gc.get_freeze_count(), gc.isenabled(), gc.get_threshold()[0])
Startup().ending()
print(gc.isenabled())
"""


def test_settled_freezes_what_the_process_holds_and_ending_stops_the_collector() -> None:
    done = subprocess.run([sys.executable, "-c", SETTLED], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    before, frozen, enabled, threshold = first.split()
    assert int(before) == 0 and int(frozen) > 1000 and enabled == "True"
    assert threshold == "10000"
    assert second == "False"


def test_a_run_ended_quickly_leaves_its_files_and_its_output_whole(tmp_path: Path) -> None:
    done = convy("run", "--demo", "--junit", "junit.xml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    folder = only_run(tmp_path / "results")
    assert (folder / "report.html").read_text().rstrip().endswith("</html>")
    assert (tmp_path / "junit.xml").read_text().rstrip().endswith("</testsuite>")
    assert len((folder / "attempts.jsonl").read_text().splitlines()) == 12
    assert done.stdout.rstrip().endswith("convy: wrote junit.xml")
