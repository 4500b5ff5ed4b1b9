"""Bounds on what a user file may ask (docs/settings.md, max-turns): a dialogue has at most 200 agent answers,
whether the scenario's `max_turns` or the `max-turns` setting asks for more."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.command import convy


@pytest.mark.parametrize("turns", ["201", "99999999999999999999999999"])
def test_a_scenario_asking_for_more_than_200_turns_is_exit_2_at_its_line(tmp_path: Path, turns: str) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s.yaml").write_text(
        f"name: s\nturns: [hi]\nmax_turns: {turns}\nchecks: [{{contains: x}}]\n"
    )
    done = convy("run", "--agent-url", "http://127.0.0.1:9/x", cwd=tmp_path)
    assert done.returncode == 2
    assert "scenarios/s.yaml:3" in done.stderr and "200" in done.stderr


def test_the_setting_is_bounded_too(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s.yaml").write_text("name: s\nturns: [hi]\nchecks: [{contains: x}]\n")
    done = convy("run", "--agent-url", "http://127.0.0.1:9/x", "--max-turns", "201", cwd=tmp_path)
    assert done.returncode == 2 and "max-turns" in done.stderr and "200" in done.stderr


def test_a_long_read_says_it_is_still_reading_and_a_short_one_says_nothing() -> None:
    import io
    import threading

    from convy.command.playing import Slow

    said = io.StringIO()
    pause = threading.Event()
    with Slow(said, "still reading", after=0.0):
        for _ in range(1000):  # the line comes from a timer's thread: wait for it (a busy machine)
            if said.getvalue():
                break
            pause.wait(0.01)
    assert said.getvalue() == "still reading\n"
    quiet = io.StringIO()
    with Slow(quiet, "still reading", after=3600.0):
        pass
    assert quiet.getvalue() == ""
