"""The built wheel (what the action's image installs) holds every file the demo, init and the pages
read at run time."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_holds_every_data_file_of_the_package(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    names = set(zipfile.ZipFile(next(tmp_path.glob("*.whl"))).namelist())
    source = ROOT / "src"
    wanted = {
        str(p.relative_to(source))
        for p in source.rglob("*")
        if p.is_file()
        and p.suffix not in {".py", ".pyc"}
        and not {"__pycache__", "convy_action.egg-info"} & set(p.relative_to(source).parts)
    }
    assert wanted, "the package has data files"
    assert wanted <= names, f"missing from the wheel: {sorted(wanted - names)}"
