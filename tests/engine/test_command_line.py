"""The command line (decision 38): an unknown or misspelt flag is refused by the subcommand it was
given to, with that subcommand's usage and the nearest flag, exit 2; no flag is taken by an
abbreviation; every subcommand's --help has a description, its exit codes and each default once."""

from __future__ import annotations

import argparse
import io
import re
from pathlib import Path

import pytest

from convy.cli import Command
from convy.project.commandline import CommandLine, ExitCodes
from tests.support.command import convy

EXITS = {
    "init": (0, 2),
    "run": (0, 1, 2, 3, 130, 141, 143),
    "resume": (0, 1, 2, 3, 130, 141, 143),
    "report": (0, 2),
    "compare": (0, 1, 2, 3),
    "merge": (0, 1, 2, 3),
    "estimate": (0, 2),
    "export": (0, 1, 2),
    "draft": (0, 2),
}
DEFAULT = re.compile(r"\(default\b|\bdefault:")
"""How a help text says a default: `(default: 8)`, `` `none` (default)``, `secret; default: model-key`."""


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = Command([], {}, io.StringIO(), io.StringIO()).parser()
    (chosen,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return dict(chosen.choices)


def test_a_misspelt_flag_of_run_is_refused_by_run_with_its_usage_and_the_nearest_flag(tmp_path: Path) -> None:
    done = convy("run", "--demo", "--repeats", "3", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    first, second = done.stderr.splitlines()[:2]
    assert first == "convy run: error: --repeats is not a flag of convy run: did you mean --repeat?"
    assert second.startswith("usage: convy run "), "the usage after what is wrong"
    assert "usage: convy [-h] COMMAND" not in done.stderr
    assert not (tmp_path / "results").exists(), "nothing is played"


def test_no_abbreviation_is_taken_min_pass_is_not_min_pass_rate(tmp_path: Path) -> None:
    done = convy("run", "--demo", "--min-pass", "0.5", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(
        "convy run: error: --min-pass is not a flag of convy run: did you mean --min-pass-rate?"
    )
    assert not (tmp_path / "results").exists()


def test_the_whole_name_with_a_value_after_an_equals_sign_is_still_taken(tmp_path: Path) -> None:
    done = convy("run", "--demo", "--min-pass-rate=0.9", "--fail-fast=false", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # the demo's 75% is under the floor


def test_compare_refuses_a_misspelt_flag_and_an_abbreviation_with_its_own_usage(tmp_path: Path) -> None:
    misspelt = convy("compare", "a", "b", "--alpah", "0.1", cwd=tmp_path)
    assert misspelt.returncode == 2
    assert misspelt.stderr.startswith("convy compare: error: ")
    assert "usage: convy compare " in misspelt.stderr
    assert "--alpah is not a flag of convy compare: did you mean --alpha?" in misspelt.stderr
    abbreviated = convy("compare", "a", "b", "--max-no", "0.5", cwd=tmp_path)
    assert abbreviated.returncode == 2
    assert "--max-no is not a flag of convy compare: did you mean --max-no-verdict?" in abbreviated.stderr
    equals = convy("compare", "a", "b", "--max-dorp=0.5", cwd=tmp_path)
    assert "--max-dorp is not a flag of convy compare: did you mean --max-drop?" in equals.stderr


def test_a_flag_nothing_is_near_is_refused_without_a_guess(tmp_path: Path) -> None:
    done = convy("report", "--zzzzzz", cwd=tmp_path)
    assert done.returncode == 2
    assert "convy report: error: --zzzzzz is not a flag of convy report\n" in done.stderr
    assert "did you mean" not in done.stderr


def test_an_unknown_flag_before_the_subcommand_is_refused_by_the_command(tmp_path: Path) -> None:
    done = convy("--verbose", "report", cwd=tmp_path)
    assert done.returncode == 2
    assert "convy: error: --verbose is not a flag of convy" in done.stderr


def test_the_nearest_flag_is_the_one_it_begins_else_the_closest_by_spelling() -> None:
    parser = CommandLine(prog="p", allow_abbrev=False)
    for flag in ("--repeat", "--rejudge", "--replay", "--min-pass-rate", "--max-drop"):
        parser.add_argument(flag)
    assert parser.nearest("--min") == "--min-pass-rate"
    assert parser.nearest("--repaet") == "--repeat"
    assert parser.nearest("--rep=3") in ("--repeat", "--replay")
    assert parser.nearest("--repeat") == ""
    assert parser.nearest("--qqqqqqqq") == ""
    assert parser.unknown(["stray"]) == "unrecognized arguments: stray"


@pytest.mark.parametrize("name", sorted(EXITS))
def test_each_subcommand_s_help_has_a_description_its_exit_codes_and_each_default_once(name: str) -> None:
    parser = subcommands()[name]
    assert parser.description and len(parser.description) > 40, name
    assert parser.epilog == ExitCodes(EXITS[name]).text() + "."
    helped = parser.format_help()
    assert "exit codes: 0 " in helped
    for code in EXITS[name]:
        assert re.search(rf"\b{code} [a-z]", " ".join(helped.split())), (name, code)
    for code in set(range(256)) - set(EXITS[name]):
        assert not re.search(rf"exit codes:.*\b{code} [a-z]", " ".join(helped.split())), (name, code)
    twice = [
        action.option_strings or action.dest
        for action in parser._actions
        if len(DEFAULT.findall(action.help or "")) > 1
    ]
    assert twice == [], name
    assert len(DEFAULT.findall(parser.description or "")) <= 1


def test_a_setting_that_names_its_default_in_its_description_gets_no_second_one() -> None:
    helped = " ".join(subcommands()["run"].format_help().split())
    assert "`none` (default), `sse`, `ndjson` or `text`" in helped
    assert "(default: none)" not in helped
    assert "--repeat REPEAT attempts per scenario (default: 3)" in helped


def test_run_help_from_the_shell_says_what_it_does_and_how_it_ends(tmp_path: Path) -> None:
    done = convy("run", "--help", cwd=tmp_path)
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "Play the project's scenarios against its agent into a new run folder" in text
    assert "exit codes: 0 pass, 1 fail, 2 configuration error" in text
    assert "130 interrupted (Ctrl+C), 141 its output was closed (`| head`), 143 stopped (SIGTERM)" in text
    assert "--junit JUNIT" in text


def test_a_misspelt_flag_of_draft_is_refused_by_draft_with_the_nearest_flag(tmp_path: Path) -> None:
    done = convy("draft", "chats.jsonl", "--claims", "c", cwd=tmp_path)
    assert done.returncode == 2
    first = done.stderr.splitlines()[0]
    assert first == "convy draft: error: --claims is not a flag of convy draft: did you mean --claim?"
    assert "usage: convy draft " in done.stderr


def test_a_value_not_allowed_lists_the_allowed_values_and_never_an_empty_one(tmp_path: Path) -> None:
    done = convy("run", "--agent-url", "http://127.0.0.1:9/", "--agent-protocol", "bogus", cwd=tmp_path)
    assert done.returncode == 2
    said = done.stderr.strip().splitlines()[-1]
    assert said.endswith(
        "agent-protocol (--agent-protocol): must be one of a2a, ag-ui, openai-chat, openai-responses, "
        "template, vercel-ai"
    ), said
