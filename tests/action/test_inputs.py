"""Inputs: flags and INPUT_* (hyphens kept) over CONVY_* and the defaults; unknown inputs and bad
values are configuration errors naming the input, never its value; Masks finds every secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from convy.errors import ConfigurationError
from convy_action.runner.inputs import NAMES, Inputs, Masks


def inputs(tmp_path: Path, *argv: str, **environ: str) -> Inputs:
    return Inputs(tuple(argv), environ, tmp_path)


def test_the_runner_s_inputs_with_hyphens_kept_become_settings(tmp_path: Path) -> None:
    given = inputs(tmp_path, **{"INPUT_MAX-DROP": "0.1", "INPUT_REPEAT": " 5 ", "INPUT_DRY-RUN": "true"})
    settings = given.settings(given.flags())
    assert (settings.max_drop, settings.repeat, settings.dry_run) == (0.1, 5, True)


def test_an_empty_input_counts_as_not_given_so_convy_variables_still_apply(tmp_path: Path) -> None:
    given = inputs(tmp_path, **{"INPUT_MAX-DROP": "", "CONVY_MAX_DROP": "0.2", "INPUT_BASELINE": ""})
    settings = given.settings(given.flags())
    assert settings.max_drop == 0.2 and settings.baseline == "auto"


def test_a_flag_wins_over_the_input(tmp_path: Path) -> None:
    given = inputs(tmp_path, "--baseline", "none", "--dry-run", "--comment=false", INPUT_BASELINE="auto")
    settings = given.settings(given.flags())
    assert (settings.baseline, settings.dry_run, settings.comment) == ("none", True, False)


def test_every_setting_of_the_action_is_a_flag(tmp_path: Path) -> None:
    helped = inputs(tmp_path).parser().format_help()
    missing = [name for name in NAMES if f"--{name}" not in helped]
    assert missing == []


def test_an_unknown_input_is_an_error_naming_it(tmp_path: Path) -> None:
    given = inputs(tmp_path, **{"INPUT_MAX-DORP": "0.1", "INPUT_REPEAT": "2"})
    with pytest.raises(ConfigurationError) as error:
        given.settings(given.flags())
    assert error.value.where == "INPUT_MAX-DORP"


def test_an_unknown_flag_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as error:
        inputs(tmp_path, "--max-dorp", "1").flags()
    assert error.value.where == "--max-dorp"


@pytest.mark.parametrize(
    ("name", "value"), [("REPEAT", "0"), ("MAX-DROP", "2"), ("ALPHA", "1.75"), ("COMMENT", "yes-please")]
)
def test_a_bad_value_names_the_input_but_not_the_value(tmp_path: Path, name: str, value: str) -> None:
    given = inputs(tmp_path, **{f"INPUT_{name}": value})
    with pytest.raises(ConfigurationError) as error:
        given.settings(given.flags())
    assert f"INPUT_{name}" in str(error.value) and name.lower() in error.value.where
    assert value not in error.value.message or value in ("0", "2")  # single digits may be bounds


def test_masks_cover_every_secret_wherever_it_was_given(tmp_path: Path) -> None:
    environ = {
        "INPUT_MODEL-KEY": "sk-input-key",
        "CONVY_MODEL_KEY": "sk-variable-key",
        "INPUT_GITHUB-TOKEN": "ghs_token123",
        "INPUT_AGENT-HEADERS": "Authorization: Bearer abc.def.ghi\nX-Api-Key: k-42-secret\n",
        "INPUT_MODEL-URL": "https://models.example",
    }
    values = Masks({"model-key": "sk-flag-key"}, environ).values()
    for secret in (
        "sk-input-key",
        "sk-variable-key",
        "sk-flag-key",
        "ghs_token123",
        "abc.def.ghi",
        "k-42-secret",
    ):
        assert secret in values
    assert "Authorization: Bearer abc.def.ghi" in values
    assert "https://models.example" not in values


def test_masks_cover_the_judge_key_and_skip_values_too_short_to_be_secrets() -> None:
    environ = {"INPUT_JUDGE-KEY": "sk-judge-key-99", "INPUT_MODEL-KEY": "x", "CONVY_GITHUB_TOKEN": "abc1234"}
    values = Masks({}, environ).values()
    assert "sk-judge-key-99" in values
    assert "x" not in values and "abc1234" not in values


def test_a_misspelt_flag_names_the_nearest_flag_of_the_action(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as error:
        inputs(tmp_path, "--max-dorp", "1").flags()
    assert error.value.message == (
        "is not a flag of python -m convy_action; did you mean --max-drop? (see --help)"
    )


def test_no_abbreviation_of_a_flag_of_the_action_is_taken(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as error:
        inputs(tmp_path, "--min-pass", "0.5").flags()
    assert error.value.where == "--min-pass"
    assert "did you mean --min-pass-rate?" in error.value.message
    with pytest.raises(ConfigurationError) as error:
        inputs(tmp_path, "--dry", "--demo").flags()
    assert "did you mean --dry-run?" in error.value.message


def test_a_flag_nothing_is_near_gets_no_guess(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as error:
        inputs(tmp_path, "--qqqqqqqq").flags()
    assert error.value.message == "is not a flag of python -m convy_action (see --help)"


def test_the_action_s_help_has_its_description_its_exit_codes_and_each_default_once(tmp_path: Path) -> None:
    import re

    parser = inputs(tmp_path).parser()
    helped = " ".join(parser.format_help().split())
    assert "The convy GitHub Action: play the scenarios" in helped
    assert (
        "exit codes: 0 pass, 1 fail, 2 configuration error (a file, a setting or a flag to fix), "
        "3 inconclusive, 130 interrupted (Ctrl+C), 143 stopped (SIGTERM)."
    ) in helped
    said = re.compile(r"\(default\b|\bdefault:")
    twice = [action.dest for action in parser._actions if len(said.findall(action.help or "")) > 1]
    assert twice == []
