"""Scenarios written in Python (`convy.scenario`) and checks that are Python functions of the
dialogue: registered without I/O, a mistake said at the call's file and line, each function's answer
read as a check's result, its exception that check's failure only."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import convy
from convy.demo.localserver import LocalServer
from convy.demo.supportbot import SupportBot
from convy.play.agent import Call
from convy.play.checks import Inspection
from convy.play.outcome import Turn
from convy.project.written import WRITTEN, FunctionCheck
from tests.servers.litellm_proxy import KEY, LiteLLMProxy

DOCS = Path(__file__).resolve().parents[2] / "docs" / "pytest.md"

TURNS = (
    Turn(user="I want a refund", agent="What is your order number?", seconds=0.1),
    Turn(
        user="It's order 4411.",
        agent="I've issued a full refund of $59.00.",
        seconds=0.1,
        steps=(Call(name="refund", arguments='{"order": "4411"}'),),
    ),
)


def passes(dialogue: object) -> None:
    return None


def refunded_last(dialogue: object) -> bool:
    return "refund" in dialogue[-1].agent  # type: ignore[index]


def says_no(dialogue: object) -> bool:
    return False


def explains(dialogue: object) -> str:
    return f"only {len(dialogue)} turns"  # type: ignore[arg-type]


def asserts(dialogue: object) -> None:
    assert len(dialogue.turns) > 5, "too short"  # type: ignore[attr-defined]


def breaks(dialogue: object) -> None:
    raise KeyError("missing")


def test_each_answer_of_a_function_is_read_as_the_checks_result() -> None:
    checks = tuple(
        FunctionCheck(function=f) for f in (passes, refunded_last, says_no, explains, asserts, breaks)
    )
    results = [(r.claim, r.passed, r.reason, r.checked) for r in Inspection(TURNS).results(checks)]
    assert results == [
        ("passes", True, "passed", True),
        ("refunded_last", True, "passed", True),
        ("says_no", False, "returned False", True),
        ("explains", False, "only 2 turns", True),
        ("asserts", False, "too short", True),
        ("breaks", False, "KeyError: 'missing'", True),
    ]


def test_a_written_scenario_is_registered_under_its_file_and_returned() -> None:
    written = convy.scenario("written-here", turns=["hello"], checks=[passes, {"contains": "hi"}], tags=["x"])
    line = sys._getframe().f_lineno - 1
    assert written.name == "written-here" and written.tags == ("x",)
    assert [check.kind for check in written.checks] == ["function", "contains"]
    assert (line, written) in WRITTEN.of(Path(__file__))


def test_a_mistake_in_a_written_scenario_names_the_file_and_line_of_the_call() -> None:
    with pytest.raises(convy.ConfigurationError) as raised:
        convy.scenario("no-claims", user="You are Sam.")
    line = sys._getframe().f_lineno - 1
    assert raised.value.where == f"{__file__}:{line}"
    assert "`claims` is empty" in raised.value.message
    with pytest.raises(convy.ConfigurationError, match="unknown field `colour`"):
        convy.scenario("bad-check", turns=["hi"], checks=[{"colour": "red"}])


def test_a_changed_function_body_changes_the_scenarios_fingerprint() -> None:
    def one(dialogue: object) -> bool:
        return True

    first = convy.scenario("fingerprinted", turns=["hi"], checks=[one])

    def one(dialogue: object) -> bool:  # type: ignore[no-redef]  # noqa: F811
        return False

    second = convy.scenario("fingerprinted", turns=["hi"], checks=[one])
    assert first.fingerprint() != second.fingerprint()
    again = convy.scenario("fingerprinted", turns=["hi"], checks=[one])
    assert second.fingerprint() == again.fingerprint()


def test_the_docs_python_example_plays_against_the_demo_servers(tmp_path: Path) -> None:
    example = re.search(r"```python\n(# test_conversations.py\n.*?)```", DOCS.read_text(), re.S)
    assert example is not None
    (tmp_path / "test_conversations.py").write_text(example.group(1))
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--convy-demo", "-v"]
        + ["test_conversations.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test_conversations.py::refund-in-python PASSED (held 3 of 3)" in done.stdout
    assert "convy gate: pass" in done.stdout


def test_the_docs_check_plays_with_a_user_model_behind_litellms_proxy(
    tmp_path: Path, litellm_proxy: LiteLLMProxy
) -> None:
    """The docs' function check in a scenario whose simulated user is LiteLLM's `mock` model, served
    by the real LiteLLM proxy (OpenAI-compatible), against the demo's support bot."""
    example = re.search(r"```python\n(# test_conversations.py\n.*?)\nrefund = ", DOCS.read_text(), re.S)
    assert example is not None
    (tmp_path / "test_conversations.py").write_text(
        example.group(1)
        + '\nconvy.scenario("proxied", user="You are Sam.", max_turns=2, checks=[no_refund_without_order])\n'
    )
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "support.yaml").write_text(
        'url: ${CONVY_DEMO_URL}/chat\nbody: {"messages": "$messages", "session": "$conversation"}\n'
        "answer: reply.text\nsteps: trace\n"
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    bot = LocalServer(SupportBot())
    bot.start()
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "--convy",
                "-v",
                "--convy-repeat",
                "2",
            ],
            cwd=tmp_path,
            env={
                **{k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "PYTEST_"))},
                "CONVY_DEMO_URL": bot.url,
                "CONVY_MODEL_URL": f"{litellm_proxy.url}/v1",
                "CONVY_MODEL_KEY": KEY,
                "CONVY_USER_MODEL": "mock",
                "CONVY_LABELS": "none",
            },
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        bot.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test_conversations.py::proxied PASSED (held 2 of 2)" in done.stdout
