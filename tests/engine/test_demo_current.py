"""The demo is current (the first hour): its labels have no stale decision, and a cost that includes
the judge's calibration says how much of it that was — on the cost line and in a comparison — so two
identical demo runs that differ in cost say why."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.command import convy


def runs(tmp_path: Path) -> list[Path]:
    return [p for p in (tmp_path / "results" / "support").iterdir() if p.is_dir()]


def cost(text: str) -> str:
    found = re.search(r"^cost +(.*)$", text, re.MULTILINE)
    assert found, text
    return found.group(1).strip()


def test_the_demo_has_no_stale_label_and_its_cost_says_what_calibrating_took(tmp_path: Path) -> None:
    first = convy("run", "--demo", cwd=tmp_path)
    (old,) = runs(tmp_path)
    assert "left out of the calibration" not in first.stdout and " stale" not in first.stdout
    assert re.fullmatch(r"\$[0-9.]+ \(\$[0-9.]+ of it calibrating the judge\)", cost(first.stdout))
    second = convy("run", "--demo", cwd=tmp_path)
    assert re.fullmatch(r"\$[0-9.]+", cost(second.stdout)), "the second run reuses every decision"
    (new,) = set(runs(tmp_path)) - {old}
    compared = convy("compare", str(new), str(old), cwd=tmp_path)
    assert "of it calibrating the judge" in cost(compared.stdout)
