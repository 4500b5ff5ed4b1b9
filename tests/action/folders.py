"""Run folders for the action's tests: the golden ones, copies whose attempts all hold (a better
baseline), and their zips as artifacts — well-formed or hostile."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def golden(name: str = "format-1-finished") -> Path:
    return GOLDEN / name


def copied(name: str, to: Path) -> Path:
    shutil.copytree(golden(name), to)
    return to


def all_held(to: Path, repeat: int = 3) -> Path:
    """A finished demo run folder of `repeat` attempts per scenario, every one holding."""
    shutil.copytree(golden(), to)
    run = json.loads((to / "run.json").read_text())
    run["spec"]["repeat"] = repeat
    (to / "run.json").write_text(json.dumps(run))
    lines = [json.loads(line) for line in (to / "attempts.jsonl").read_text().splitlines()]
    firsts = {line["scenario"]: line for line in lines if line["index"] == 0}
    written = []
    for scenario in run["spec"]["scenarios"]:
        for index in range(repeat):
            line = dict(firsts[scenario["name"]], index=index)
            claims = [dict(c, **{"pass": True}) for c in line["decision"]["claims"]]
            line["decision"] = {"type": "verdict", "holds": True, "claims": claims}
            written.append(json.dumps(line))
    (to / "attempts.jsonl").write_text("\n".join(written) + "\n")
    return to


def zipped(folder: Path) -> bytes:
    """The folder as the action uploads it: its files at the zip's root."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def hostile(folder: Path) -> bytes:
    """A zip of the folder with one more entry escaping it."""
    buffer = io.BytesIO(zipped(folder))
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.writestr("../../escaped.txt", "outside")
    return buffer.getvalue()
