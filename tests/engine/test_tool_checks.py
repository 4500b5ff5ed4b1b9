"""Checks that need no judge, on the steps an agent reported: a tool called with arguments
(`tool: {name, args}`, a value or `{matches: REGEX}`), a tool never called (`not_tool`), tools
called in order (`tools`), arguments read as JSON when they are a JSON string."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from convy import ConfigurationError
from convy.play.agent import Call, Thought
from convy.play.checks import Inspection
from convy.play.outcome import Turn
from convy.project.document import Document
from convy.project.scenario import ArgumentMatch, Check, ExpectedCall, Scenario


def turn(*steps: Call | Thought) -> Turn:
    return Turn(user="u", agent="a", seconds=0.1, steps=steps)


LOOKUP = Call(
    name="lookup_order", arguments=json.dumps({"order": "4411", "email": "ann@example.com", "n": 2})
)
REFUND = Call(name="issue_refund", arguments='{"order": "4411"}')
TURNS = (turn(Thought(text="let me look")), turn(LOOKUP), turn(Call(name="note", arguments="x"), REFUND))


def passed(check: Check, turns: tuple[Turn, ...] = TURNS) -> tuple[bool, str]:
    result = Inspection(turns).result(check)
    return result.passed, result.reason


def test_a_tool_with_arguments_passes_only_when_the_call_has_them() -> None:
    assert passed(Check(tool=ExpectedCall(name="lookup_order", args={"order": "4411"}))) == (
        True,
        "called in turn 2",
    )
    assert passed(Check(tool=ExpectedCall(name="lookup_order", args={"order": "9999"})))[0] is False
    assert passed(Check(tool=ExpectedCall(name="lookup_order", args={"missing": "x"})))[0] is False
    assert passed(Check(tool=ExpectedCall(name="lookup_order", args={"n": 2})))[0] is True
    assert passed(Check(tool=ExpectedCall(name="lookup_order", args={"n": "2"})))[0] is True
    matching = ExpectedCall(name="lookup_order", args={"email": ArgumentMatch(matches=r"@example\.com$")})
    assert passed(Check(tool=matching))[0] is True
    other = ExpectedCall(name="lookup_order", args={"email": ArgumentMatch(matches=r"@other\.org$")})
    assert passed(Check(tool=other))[0] is False
    assert passed(Check(tool=ExpectedCall(name="issue_refund", args={"order": "4411"}), within="last"))[0]


def test_arguments_given_as_a_json_string_holding_json_are_read_again() -> None:
    twice = Call(name="lookup_order", arguments=json.dumps(json.dumps({"order": "4411"})))
    assert passed(Check(tool=ExpectedCall(name="lookup_order", args={"order": "4411"})), (turn(twice),))[0]
    plain = Call(name="lookup_order", arguments="order 4411")
    assert (
        passed(Check(tool=ExpectedCall(name="lookup_order", args={"order": "4411"})), (turn(plain),))[0]
        is False
    )
    assert passed(Check(tool="lookup_order"), (turn(plain),))[0] is True


def test_not_tool_passes_when_no_step_calls_it() -> None:
    assert passed(Check(not_tool="delete_account")) == (True, "no call of delete_account in any turn")
    assert passed(Check(not_tool="issue_refund")) == (False, "called in turn 3")
    assert passed(Check(not_tool="lookup_order", within="last"))[0] is True


def test_tools_pass_when_called_in_this_order_with_others_between() -> None:
    assert passed(Check(tools=("lookup_order", "issue_refund"))) == (
        True,
        "called in this order in turns 2, 3",
    )
    assert passed(Check(tools=("issue_refund", "lookup_order"))) == (
        False,
        "no call of lookup_order after issue_refund",
    )
    assert passed(Check(tools=("escalate", "lookup_order"))) == (False, "no call of escalate")


def test_a_check_reads_as_what_it_asks() -> None:
    call = ExpectedCall(name="lookup_order", args={"order": "4411", "email": ArgumentMatch(matches="@x")})
    assert Check(tool=call).text() == "calls tool lookup_order with order='4411', email=/@x/"
    assert Check(not_tool="issue_refund").text() == "does not call tool issue_refund"
    assert Check(tools=("a", "b")).text() == "calls tools a then b, in this order"


def test_a_scenario_file_declares_them_and_a_bad_one_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "refund.yaml"
    path.write_text(
        "user: a customer\nclaims: [The agent helps]\nchecks:\n"
        "  - tool: {name: lookup_order, args: {order: '4411', email: {matches: '@example'}}}\n"
        "  - not_tool: issue_refund\n"
        "  - tools: [lookup_order, issue_refund]\n",
        encoding="utf-8",
    )
    scenario = Document(path, tmp_path).declarations()[0].scenario
    kinds = [check.kind for check in scenario.checks]
    assert kinds == ["tool", "not_tool", "tools"]
    assert scenario.checks[0].call.args["email"] == ArgumentMatch(matches="@example")
    path.write_text(
        "user: a customer\nclaims: [The agent helps]\nchecks:\n  - not_tool: x\n    tools: [a]\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigurationError) as raised:
        Document(path, tmp_path).declarations()
    assert raised.value.where == "refund.yaml:4" and "exactly one of" in raised.value.message


def test_a_scenario_s_fingerprint_is_what_it_was_for_the_checks_it_could_have_before() -> None:
    checks = (Check(contains="Order", within="last"), Check(tool="lookup"))
    scenario = Scenario(name="x", user="u", claims=("a",), checks=checks)
    assert (scenario.fingerprint(), scenario.criteria()) == ("86092b25617b750e", "bc9e286fc05f48e3")
    with_new = Scenario(name="x", user="u", claims=("a",), checks=(Check(not_tool="refund"),))
    assert with_new.fingerprint() != scenario.fingerprint()
