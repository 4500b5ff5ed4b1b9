"""The engine's use case, as a third client calls it: a project played with a display and a stop
signal of the client's own, in a loop of its own even where the caller runs one, and the reviewed
run given back — its comparison, the gate's decision, the comment, the run folder."""

from __future__ import annotations

import asyncio
import io
import json
import re
import signal
import threading
from pathlib import Path

import msgspec
import pytest

import convy
import convy.runs


def demo(tmp_path: Path, **fields: object) -> convy.Plan:
    flags: dict[str, object] = {"repeat": 1}
    flags.update(fields.pop("flags", {}))  # type: ignore[call-overload]
    return convy.Plan(folder=tmp_path, flags=flags, demo=True, **fields)  # type: ignore[arg-type]


def test_a_plan_plays_the_demo_and_gives_back_the_reviewed_run(tmp_path: Path) -> None:
    out = io.StringIO()
    with demo(tmp_path).opened() as opened:
        ready = opened.prepared()
        reviewed = ready.played(convy.Terminal(out), convy.Signals())
    assert reviewed.run.folder == ready.folder
    assert ready.folder.parent.parent == tmp_path / "results"
    assert (ready.folder / "attempts.jsonl").is_file()
    assert {change.name for change in reviewed.comparison.scenarios} == {
        "cancel-subscription",
        "order-status",
        "refund-late-order",
        "talk-to-human",
    }
    assert reviewed.decision.exit_code in (0, 1, 3)
    assert reviewed.decision.rule in reviewed.comment(convy.runs.Links())
    assert f"convy: 4 attempts of 4 to play against 'support' → {ready.folder}" in out.getvalue()


def test_a_selection_plays_the_scenarios_named_only(tmp_path: Path) -> None:
    selection = convy.Selection(names=("scenarios/order-status.yaml::order-status",))
    with demo(tmp_path, selection=selection).opened() as opened:
        reviewed = opened.prepared().played(convy.Silent())
    assert [change.name for change in reviewed.comparison.scenarios] == ["order-status"]


def test_a_selection_naming_no_scenario_of_the_project_is_a_configuration_error(tmp_path: Path) -> None:
    selection = convy.Selection(names=("scenarios/order-status.yaml::no-such",))
    with (
        demo(tmp_path, selection=selection).opened() as opened,
        pytest.raises(convy.ConfigurationError) as caught,
    ):
        opened.prepared()
    assert caught.value.where == "scenarios/order-status.yaml::no-such"


def test_a_run_plays_in_a_loop_of_its_own_where_the_caller_runs_one(tmp_path: Path) -> None:
    async def inside() -> convy.Reviewed:
        with demo(tmp_path).opened() as opened:
            return opened.prepared().played(convy.Silent(), convy.Signals())

    reviewed = asyncio.run(inside())
    assert reviewed.comparison.now.attempts == 4


def test_a_cancelled_run_is_interrupted_with_its_folder_kept(tmp_path: Path) -> None:
    class Cancelling(convy.Silent):
        def said(self, line: str) -> None:
            asyncio.current_task().cancel()  # type: ignore[union-attr]

    with demo(tmp_path).opened() as opened:
        ready = opened.prepared()
        with pytest.raises(convy.Interrupted) as caught:
            ready.played(Cancelling(), convy.NoSignal())
    assert caught.value.folder == ready.folder and caught.value.exit_code == 130
    assert (ready.folder / "run.json").is_file()


def test_the_demo_s_agent_is_the_one_resumed_and_its_folder_the_one_given(tmp_path: Path) -> None:
    with demo(tmp_path).opened() as opened:
        first = opened.prepared()
        first.played(convy.Silent())
    with demo(tmp_path, resume=str(first.folder)).opened() as opened:
        again = opened.prepared()
        assert again.folder == first.folder and again.name == first.name
        assert tuple(again.damage()) == ()


def test_the_readme_s_example_plays_the_demo_into_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = Path(__file__).resolve().parents[2]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    heading = re.compile(r"^#+ Building on the engine$", re.M)
    text = next(page.read_text() for page in pages if heading.search(page.read_text()))
    section = text[heading.search(text).start() :]  # type: ignore[union-attr]
    example = section[section.index("```python\n") + len("```python\n") :]
    example = example[: example.index("```")]
    monkeypatch.chdir(tmp_path)
    exec(compile(example, "README.md", "exec"), {})  # noqa: S102 - the documented example, run as written
    verdict, rule, folder = capsys.readouterr().out.split()
    assert verdict == "pass" and rule == "floor-only"
    assert Path(folder).parent.parent == tmp_path / "results"
    assert not (root / "src" / "convy" / "demo" / "project" / "results").exists()


def test_a_scenario_declared_in_python_is_played_after_those_named(tmp_path: Path) -> None:
    with demo(tmp_path).opened() as opened:
        first = opened.project.every()[0]
    written = msgspec.structs.replace(
        first,
        scenario=msgspec.structs.replace(first.scenario, name="declared-in-python"),
        file="tests/test_support.py",
        line=12,
    )
    selection = convy.Selection(names=("scenarios/order-status.yaml::order-status",), added=(written,))
    with demo(tmp_path, selection=selection).opened() as opened:
        reviewed = opened.prepared().played(convy.Silent())
    assert [change.name for change in reviewed.comparison.scenarios] == ["order-status", "declared-in-python"]
    entries = {entry.name: entry.file for entry in reviewed.run.file.spec.scenarios}
    assert entries["declared-in-python"] == "tests/test_support.py"


def test_a_run_is_compared_with_the_baseline_the_client_names(tmp_path: Path) -> None:
    with demo(tmp_path).opened() as opened:
        before = opened.prepared().played(convy.Silent())
    with demo(tmp_path).opened() as opened:
        baseline = opened.baseline(before.run.folder)
        reviewed = opened.prepared().played(convy.Silent(), baseline=baseline)
        assert isinstance(opened.baseline(""), convy.NoBaseline)
        with pytest.raises(convy.ConfigurationError) as caught:
            opened.baseline(tmp_path)
    assert isinstance(reviewed.comparison.baseline, convy.Summary)
    assert caught.value.where == str(tmp_path)


def test_ctrl_c_in_the_caller_s_thread_stops_a_run_played_in_a_thread_of_its_own(tmp_path: Path) -> None:
    class Interrupting(convy.Silent):
        def said(self, line: str) -> None:
            # Ctrl+C, as the caller's thread receives it while it waits for the run
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    async def inside() -> None:
        with demo(tmp_path, flags={"repeat": 5}).opened() as opened:
            ready = opened.prepared()
            with pytest.raises(convy.Interrupted) as caught:
                ready.played(Interrupting(), convy.Signals())
        assert caught.value.folder == ready.folder and caught.value.exit_code == 130
        assert json.loads((ready.folder / "run.json").read_text())["status"] == "interrupted"

    loop = asyncio.new_event_loop()  # a caller's loop that leaves SIGINT alone, as pytest-asyncio's
    try:
        loop.run_until_complete(inside())
    finally:
        loop.close()
