"""`pytest --convy`: a project's scenarios as pytest items, played in one run by the engine, as a user
runs it — real pytest in a subprocess, the plugin loaded from its entry point, against the demo's bot
and scripted models on loopback (every request counted)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from importlib.metadata import entry_points
from pathlib import Path

from tests.support.pytest_projects import (
    Served,
    attempts,
    convy_in,
    demo_copy,
    held,
    pytest_in,
    runs,
)

PLAIN_TEST = "def test_plain():\n    assert 1 + 1 == 2\n"

PYTHON_SCENARIOS = '''
import convy


def no_refund_without_order(dialogue):
    """No refund is issued in a turn where the user gave no order number."""
    for turn in dialogue:
        refunded = any(getattr(step, "name", "") == "refund" for step in turn.steps)
        if refunded and "4411" not in turn.user:
            return f"refund issued without the order number: {turn.user!r}"
    return True


def offers_gift_card(dialogue):
    assert "gift card" in dialogue[-1].agent, "no gift card offered"


def divides_by_zero(dialogue):
    return len(dialogue) / 0


refund = convy.scenario(
    "python-refund",
    user="You are Dana. Order 4411 (headphones) has not arrived after two weeks. You want a refund.",
    opening="Hi, my headphones never arrived and I want a refund.",
    max_turns=4,
    claims=["The agent confirms the amount that will be refunded."],
    checks=[no_refund_without_order],
    tags=["billing"],
)

broken = convy.scenario(
    "python-broken",
    turns=["Where is my order 1001?"],
    checks=[{"contains": "1001"}, offers_gift_card, divides_by_zero],
)


def test_written_returns_the_scenario():
    assert refund.name == "python-refund" and broken.checks[1].name == "offers_gift_card"
'''


def test_the_plugin_is_registered_under_pytest11_as_convy() -> None:
    found = {e.name: e.value for e in entry_points(group="pytest11")}
    assert found.get("convy") == "convy.plugin.hooks"


def test_importing_the_plugin_loads_none_of_the_engine() -> None:
    code = "import sys, convy.plugin.hooks; print(sorted(m for m in sys.modules if m.startswith('convy')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    face = {"convy", "convy.lazy", "convy.release"}  # `import convy` alone: the face, loaded lazily
    assert set(eval(done.stdout)) - face == {"convy.plugin", "convy.plugin.hooks", "convy.plugin.stash"}


def test_without_convy_an_unrelated_suite_runs_as_without_the_plugin(tmp_path: Path) -> None:
    project = demo_copy(tmp_path / "project")
    (project / "test_plain.py").write_text(PLAIN_TEST + PYTHON_SCENARIOS)
    (project / "scenarios" / "broken.yaml").write_text("name: broken\nuser: [\n")
    with Served().started() as served:
        done = pytest_in(project, "-v", env=served.environ())
        without = pytest_in(project, "-v", "-p", "no:convy", env=served.environ())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout and not [
        line for line in done.stdout.splitlines() if line.startswith("convy")
    ]
    assert served.requests == 0 and not (project / "results").exists()
    assert (
        items(done.stdout)
        == items(without.stdout)
        == [
            "test_plain.py::test_plain PASSED",
            "test_plain.py::test_written_returns_the_scenario PASSED",
        ]
    )


def items(out: str) -> list[str]:
    """The lines of pytest's -v output that report an item, without the progress figure."""
    return [
        re.sub(r"\s+\[\s*\d+%\]$", "", line) for line in out.splitlines() if re.search(r"\[\s*\d+%\]$", line)
    ]


def test_collect_only_lists_scenarios_by_file_and_name_and_plays_nothing(tmp_path: Path) -> None:
    project = demo_copy(tmp_path / "project")
    (project / "test_support.py").write_text(PYTHON_SCENARIOS)
    with Served().started() as served:
        listed = pytest_in(project, "--convy", "--collect-only", "-q", env=served.environ())
        billing = pytest_in(project, "--convy", "--collect-only", "-q", "-m", "billing", "--strict-markers")
        keyword = pytest_in(project, "--convy", "--collect-only", "-q", "-k", "order and not refund")
        chosen = pytest_in(
            project, "--convy", "--collect-only", "-q", "scenarios/order-status.yaml::order-status"
        )
        deselected = pytest_in(
            project,
            "--convy",
            "--collect-only",
            "-q",
            "--deselect",
            "scenarios/talk-to-human.yaml::talk-to-human",
        )
    assert served.requests == 0 and not (project / "results").exists()
    ids = [line for line in listed.stdout.splitlines() if "::" in line]
    assert ids == [
        "scenarios/cancel-subscription.yaml::cancel-subscription",
        "scenarios/order-status.yaml::order-status",
        "scenarios/refund-late-order.yaml::refund-late-order",
        "scenarios/talk-to-human.yaml::talk-to-human",
        "test_support.py::test_written_returns_the_scenario",
        "test_support.py::python-refund",
        "test_support.py::python-broken",
    ], listed.stdout
    assert billing.returncode == 0, billing.stdout
    assert [line for line in billing.stdout.splitlines() if "::" in line] == [
        "scenarios/cancel-subscription.yaml::cancel-subscription",
        "scenarios/refund-late-order.yaml::refund-late-order",
        "test_support.py::python-refund",
    ]
    assert [line for line in keyword.stdout.splitlines() if "::" in line] == [
        "scenarios/order-status.yaml::order-status"
    ]
    assert [line for line in chosen.stdout.splitlines() if "::" in line] == [
        "scenarios/order-status.yaml::order-status"
    ]
    assert "talk-to-human" not in deselected.stdout and "order-status.yaml" in deselected.stdout


def test_several_agents_make_an_item_per_agent_and_the_ini_option_asks_for_the_plugin(tmp_path: Path) -> None:
    project = demo_copy(tmp_path / "project")
    (project / "agents" / "other.yaml").write_text((project / "agents" / "support.yaml").read_text())
    with (project / "pytest.ini").open("a") as ini:
        ini.write("convy = true\n")  # as --convy does
    listed = pytest_in(project, "--collect-only", "-q", "-k", "order-status")
    assert [line for line in listed.stdout.splitlines() if "::" in line] == [
        "scenarios/order-status.yaml::order-status[other]",
        "scenarios/order-status.yaml::order-status[support]",
    ]


def test_a_scenario_file_with_a_mistake_is_a_collection_error_at_its_line(tmp_path: Path) -> None:
    project = demo_copy(tmp_path / "project")
    (project / "scenarios" / "bad.yaml").write_text("name: bad\nuser: Sam\nclaims: [ok]\ncolour: red\n")
    with Served().started() as served:
        done = pytest_in(project, "--convy", env=served.environ())
    assert done.returncode == 2, done.stdout
    assert "scenarios/bad.yaml:4: unknown key `colour`" in done.stdout
    assert served.requests == 0 and not (project / "results").exists()


def test_one_run_passes_and_fails_items_by_their_attempts(tmp_path: Path) -> None:
    project = demo_copy(tmp_path / "project")
    with Served().started() as served:
        done = pytest_in(project, "--convy", "-v", "--junitxml=junit.xml", env=served.environ())
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "scenarios/order-status.yaml::order-status PASSED (held 3 of 3)" in out
    assert "scenarios/talk-to-human.yaml::talk-to-human FAILED (held 0 of 3)" in out
    assert "claim: The agent offers to connect the user with a human." in out
    assert "agent: I'm sorry, I can't transfer you to a person." in out
    (folder,) = runs(project / "results")
    assert f"convy: run folder {folder}" in out and "convy gate: pass · Decided by" in out
    assert held(folder) == {
        "order-status": 3,
        "refund-late-order": 3,
        "cancel-subscription": 3,
        "talk-to-human": 0,
    }
    run = json.loads((folder / "run.json").read_text())
    assert run["status"] == "finished" and (folder / "report.html").exists()
    report = convy_in(project, "report", str(folder))
    assert report.returncode == 0, report.stderr
    cases = {case.get("name"): case for case in ET.parse(project / "junit.xml").iter("testcase")}
    properties = {p.get("name"): p.get("value") for p in cases["talk-to-human"].iter("property")}
    assert properties == {"held": "0", "counted": "3", "attempts": "3", "run_folder": str(folder)}


def test_an_inconclusive_gate_fails_a_session_whose_items_all_passed(tmp_path: Path) -> None:
    project = demo_copy(tmp_path / "project")
    shutil_labels(project)
    with Served().started() as served:
        env = {**served.environ(), "CONVY_MIN_JUDGE_KAPPA": "0.9", "CONVY_MIN_LABELS": "1000"}
        done = pytest_in(project, "--convy", "-k", "not talk-to-human", env=env)
    assert done.returncode == 1, done.stdout
    assert "3 passed" in done.stdout and "failed" not in done.stdout
    assert "convy gate: inconclusive · Decided by judge-untrusted" in done.stdout


def shutil_labels(project: Path) -> None:
    from tests.support.pytest_projects import DEMO

    (project / "labels").mkdir()
    (project / "labels" / "demo.yaml").write_text((DEMO / "labels" / "demo.yaml").read_text())


def test_python_scenarios_and_checks_play_in_the_run_and_import_sends_nothing(tmp_path: Path) -> None:
    project = demo_copy(tmp_path / "project", scenarios=False)
    (project / "test_support.py").write_text(PYTHON_SCENARIOS)
    with Served().started() as served:
        collected = pytest_in(project, "--convy", "--collect-only", "-q", env=served.environ())
        assert collected.returncode == 0, collected.stdout
        assert served.requests == 0
        done = pytest_in(project, "--convy", "-v", env=served.environ())
    assert done.returncode == 1, done.stdout + done.stderr
    assert "test_support.py::python-refund PASSED (held 3 of 3)" in done.stdout
    assert "test_support.py::python-broken FAILED (held 0 of 3)" in done.stdout
    assert "check: offers_gift_card — no gift card offered" in done.stdout
    assert "check: divides_by_zero — ZeroDivisionError: division by zero" in done.stdout
    (folder,) = runs(project / "results")
    assert json.loads((folder / "run.json").read_text())["status"] == "finished"
    lines = attempts(folder)
    refund = next(line for line in lines if line["scenario"] == "python-refund")
    claims = {c["claim"]: c for c in refund["decision"]["claims"]}  # type: ignore[index]
    assert claims["no_refund_without_order"] == {
        "claim": "no_refund_without_order",
        "pass": True,
        "grade": None,
        "reason": "passed",
        "check": True,
    }
    broken = next(line for line in lines if line["scenario"] == "python-broken")
    reasons = [(c["claim"], c["pass"], c["reason"]) for c in broken["decision"]["claims"]]  # type: ignore[index]
    assert reasons[0] == ("contains '1001'", True, "answer 1 has it")
    assert reasons[1] == ("offers_gift_card", False, "no gift card offered")
    assert reasons[2] == ("divides_by_zero", False, "ZeroDivisionError: division by zero")


AGENT = """
import asyncio
import os
import convy

COUNT = [0]


class Talk:
    def __init__(self, worse):
        self.worse = worse

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return None

    async def reply(self, text):
        await asyncio.sleep(float(os.environ.get("BOT_DELAY", "0")))
        if text == "boom":
            raise RuntimeError("the bot fell over")
        return convy.Answer(text="sorry" if self.worse else "refund issued")


class Bot:
    def conversation(self, key):
        COUNT[0] += 1
        return Talk(os.environ.get("BOT_WORSE") == "1" and COUNT[0] % 2 == 0)


agent = Bot()
"""


def scripted_project(folder: Path, repeat: int, floor: str = "0") -> Path:
    """A project whose only scenario is scripted and checked (no model is asked), against a Python
    agent that fails every other conversation when BOT_WORSE=1."""
    (folder / "agents").mkdir(parents=True)
    (folder / "scenarios").mkdir()
    (folder / "agents" / "bot.py").write_text(AGENT)
    (folder / "scenarios" / "refund.yaml").write_text(
        "name: refund\nturns: [I want a refund]\nchecks: [{contains: refund issued}]\n"
    )
    (folder / "pyproject.toml").write_text(
        f'[tool.convy]\nrepeat = {repeat}\nmin-pass-rate = {floor}\nlabels = "none"\n'
        '[tool.pytest.ini_options]\naddopts = "-p no:cacheprovider"\n'
        'asyncio_default_fixture_loop_scope = "function"\n'
    )
    return folder


def test_a_regressed_scenario_fails_its_item_above_the_floor(tmp_path: Path) -> None:
    project = scripted_project(tmp_path / "project", repeat=12, floor="0.5")
    first = pytest_in(project, "--convy")
    assert first.returncode == 0, first.stdout + first.stderr
    (baseline,) = runs(project / "results")
    done = pytest_in(project, "--convy", "--convy-baseline", str(baseline), env={"BOT_WORSE": "1"})
    assert done.returncode == 1, done.stdout
    assert (
        "convy: held 6 of 12 (50% needed)" in done.stdout and "regressed against the baseline" in done.stdout
    )
    assert len(runs(project / "results")) == 2


def test_repeat_and_agent_flags_and_the_xdist_refusal(tmp_path: Path) -> None:
    project = scripted_project(tmp_path / "project", repeat=3)
    done = pytest_in(project, "--convy", "--convy-repeat", "2", "--convy-agent", "bot", "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "refund PASSED (held 2 of 2)" in done.stdout
    refused = pytest_in(project, "--convy", "-n", "2")
    assert refused.returncode == 4
    assert "shard: k/n" in refused.stderr
    plain = pytest_in(project, "-n", "2", "-q")
    assert plain.returncode == 5, plain.stdout + plain.stderr  # no tests, but no refusal without --convy


def test_pytest_asyncio_in_auto_mode_runs_beside_the_run(tmp_path: Path) -> None:
    project = scripted_project(tmp_path / "project", repeat=2)
    (project / "test_async.py").write_text(
        "import asyncio\n\nasync def test_sleeps():\n    await asyncio.sleep(0)\n"
    )
    done = pytest_in(project, "--convy", "-p", "asyncio", "--asyncio-mode=auto", "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test_async.py::test_sleeps PASSED" in done.stdout and "refund PASSED (held 2 of 2)" in done.stdout


def test_ctrl_c_leaves_a_run_that_convy_resume_finishes(tmp_path: Path) -> None:
    project = scripted_project(tmp_path / "project", repeat=6)
    (project / "pyproject.toml").write_text(
        (project / "pyproject.toml").read_text().replace("[tool.convy]\n", "[tool.convy]\nconcurrency = 1\n")
    )
    import os

    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_", "PYTEST_"))}
    playing = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--convy"],
        cwd=project,
        env={**environ, "BOT_DELAY": "0.5"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # Ctrl+C reaches pytest even when these tests were started where SIGINT is ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    while not any(
        folder
        for folder in runs(project / "results")
        if (folder / "attempts.jsonl").exists() and (folder / "attempts.jsonl").read_text()
    ):
        time.sleep(0.1)
    playing.send_signal(signal.SIGINT)
    out, _ = playing.communicate(timeout=60)
    (folder,) = runs(project / "results")
    assert playing.returncode == 2, out
    assert f"convy resume {folder}" in out
    assert json.loads((folder / "run.json").read_text())["status"] == "interrupted"
    resumed = convy_in(project, "resume", str(folder))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert json.loads((folder / "run.json").read_text())["status"] == "finished"
    assert len(attempts(folder)) == 6


def test_agent_failures_fail_the_item_with_the_reason_and_no_verdict_at_all_is_an_error(
    tmp_path: Path,
) -> None:
    project = scripted_project(tmp_path / "project", repeat=2)
    (project / "scenarios" / "boom.yaml").write_text("name: boom\nturns: [boom]\nchecks: [{contains: x}]\n")
    (project / "scenarios" / "unheard.yaml").write_text(
        "name: unheard\nuser: You are Sam.\nopening: hello\nmax_turns: 3\nchecks: [{contains: x}]\n"
    )
    env = {"CONVY_MODEL_URL": "http://127.0.0.1:9/v1", "CONVY_USER_MODEL": "nobody", "CONVY_PATIENCE": "1"}
    done = pytest_in(project, "--convy", "-v", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "scenarios/boom.yaml::boom FAILED (held 0 of 2)" in done.stdout
    assert "the agent failed: agent_error (RuntimeError: the bot fell over)" in done.stdout
    assert "scenarios/unheard.yaml::unheard ERROR" in done.stdout
    assert "convy: no verdict: user_" in done.stdout
    assert "scenarios/refund.yaml::refund PASSED (held 2 of 2)" in done.stdout
