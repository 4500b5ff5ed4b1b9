"""Settings: one name everywhere, flags > INPUT_* > CONVY_* > [tool.convy] > defaults, errors that
name the setting and its source but never the value."""

from __future__ import annotations

import argparse
from pathlib import Path

import msgspec
import pytest

from convy import SETTING_NAMES as ENGINE
from convy import ConfigurationError, Setting, Sources
from convy import Flags as Switches
from convy_action.runner.settings import NAMES
from convy_action.runner.settings import OWN as ACTION
from convy_action.runner.settings import ActionSettings as Settings

DESCRIPTIONS = Settings.descriptions
SECRETS = Settings.secrets
"""The engine's settings and the action's, read the one way both read them."""


def Flags(names: tuple[str, ...] = NAMES) -> Switches:  # noqa: N802 (the flags of the action's settings)
    return Switches(names, Settings)


class Read(Sources, frozen=True):
    """Sources read as the action reads them: its settings and the engine's."""

    def settings(self) -> Settings:  # type: ignore[override]
        return super().settings(Settings)


SECRET = "sk-live-5eCr3t-do-not-print"


def pyproject(folder: Path, table: str) -> None:
    text = f"[project]\nname = 'x'\n\n[tool.convy]\n{table}\n"
    (folder / "pyproject.toml").write_text(text, encoding="utf-8")


def sources(
    folder: Path, flags: dict[str, object] | None = None, environ: dict[str, str] | None = None
) -> Read:
    return Read(flags or {}, environ or {}, folder)


def test_every_setting_has_its_default(tmp_path: Path) -> None:
    settings = sources(tmp_path).settings()
    assert settings == Settings()
    assert (settings.project, settings.scenarios, settings.match) == (".", "scenarios", "")
    assert settings.model_url == "https://api.openai.com/v1"
    assert (settings.repeat, settings.concurrency, settings.max_turns) == (3, 8, 8)
    assert (settings.min_pass_rate, settings.max_drop, settings.alpha, settings.max_no_verdict) == (
        0,
        0.05,
        0.05,
        0.2,
    )
    limits = (settings.turn_timeout, settings.patience, settings.model_rpm, settings.agent_rpm)
    assert limits == (120, 300, 0, 0)
    assert (settings.results, settings.baseline, settings.retention_days) == ("results", "auto", 0)
    assert (settings.comment, settings.dry_run, settings.demo) == (True, False, False)


def test_every_setting_is_described_and_belongs_to_the_engine_or_the_action() -> None:
    names = [field.encode_name for field in msgspec.structs.fields(Settings)]
    assert list(DESCRIPTIONS) == names
    assert list(ENGINE + ACTION) == names
    assert all(DESCRIPTIONS[name] for name in names)
    assert {"model-key", "judge-key", "github-token", "agent-headers", "otlp-headers"} == SECRETS


def test_a_setting_has_one_name_everywhere() -> None:
    setting = Setting("model-url")
    assert (setting.flag, setting.variable, setting.inputs, setting.attribute) == (
        "--model-url",
        "CONVY_MODEL_URL",
        ("INPUT_MODEL-URL", "INPUT_MODEL_URL"),
        "model_url",
    )
    assert Setting("repeat").inputs == ("INPUT_REPEAT",)
    with pytest.raises(ValueError):
        Setting("model_url")


def test_pyproject_beats_the_default(tmp_path: Path) -> None:
    pyproject(tmp_path, "max-drop = 0.1\nrepeat = 5\ncomment = false")
    settings = sources(tmp_path).settings()
    assert (settings.max_drop, settings.repeat, settings.comment) == (0.1, 5, False)


def test_convy_variables_beat_pyproject(tmp_path: Path) -> None:
    pyproject(tmp_path, "max-drop = 0.1")
    settings = sources(tmp_path, environ={"CONVY_MAX_DROP": "0.2"}).settings()
    assert settings.max_drop == 0.2


def test_inputs_beat_convy_variables(tmp_path: Path) -> None:
    environ = {"CONVY_MAX_DROP": "0.2", "INPUT_MAX-DROP": "0.3"}
    assert sources(tmp_path, environ=environ).settings().max_drop == 0.3


def test_flags_beat_inputs(tmp_path: Path) -> None:
    environ = {"INPUT_MAX-DROP": "0.3"}
    assert sources(tmp_path, {"max-drop": "0.4"}, environ).settings().max_drop == 0.4


def test_all_five_layers_each_give_what_the_higher_ones_do_not(tmp_path: Path) -> None:
    pyproject(tmp_path, "repeat = 2\nconcurrency = 2\nalpha = 0.02\npatience = 2")
    environ = {"CONVY_REPEAT": "3", "CONVY_CONCURRENCY": "3", "CONVY_ALPHA": "0.03", "INPUT_REPEAT": "4"}
    environ["INPUT_CONCURRENCY"] = "4"
    settings = sources(tmp_path, {"repeat": "5"}, environ).settings()
    assert (settings.repeat, settings.concurrency, settings.alpha, settings.patience, settings.max_turns) == (
        5,
        4,
        0.03,
        2,
        8,
    )


def test_an_empty_input_counts_as_not_given(tmp_path: Path) -> None:
    pyproject(tmp_path, "repeat = 7")
    environ = {"INPUT_REPEAT": "", "INPUT_MAX-DROP": "  ", "CONVY_MAX_DROP": "0.3", "INPUT_MATCH": ""}
    settings = sources(tmp_path, environ=environ).settings()
    assert (settings.repeat, settings.max_drop, settings.match) == (7, 0.3, "")


def test_an_empty_convy_variable_counts_as_not_given(tmp_path: Path) -> None:
    pyproject(tmp_path, "repeat = 7")
    assert sources(tmp_path, environ={"CONVY_REPEAT": ""}).settings().repeat == 7


def test_an_empty_flag_is_given(tmp_path: Path) -> None:
    pyproject(tmp_path, 'match = "refund-*"')
    assert sources(tmp_path, {"match": ""}).settings().match == ""


def test_inputs_are_read_with_hyphens_or_underscores_hyphens_first(tmp_path: Path) -> None:
    assert sources(tmp_path, environ={"INPUT_MODEL_URL": "http://u"}).settings().model_url == "http://u"
    assert sources(tmp_path, environ={"INPUT_MODEL-URL": "http://h"}).settings().model_url == "http://h"
    both = {"INPUT_MODEL-URL": "http://h", "INPUT_MODEL_URL": "http://u"}
    assert sources(tmp_path, environ=both).settings().model_url == "http://h"
    blank = {"INPUT_MODEL-URL": "", "INPUT_MODEL_URL": "http://u"}
    assert sources(tmp_path, environ=blank).settings().model_url == "http://u"


def test_text_is_converted_to_each_settings_type(tmp_path: Path) -> None:
    environ = {
        "INPUT_REPEAT": "5",
        "INPUT_MIN-PASS-RATE": "0.75",
        "INPUT_TURN-TIMEOUT": "30",
        "INPUT_COMMENT": "false",
        "INPUT_DRY-RUN": "true",
        "CONVY_DEMO": "TRUE",
        "INPUT_MODEL-RPM": " 60\n",
    }
    settings = sources(tmp_path, environ=environ).settings()
    assert (settings.repeat, settings.min_pass_rate, settings.turn_timeout) == (5, 0.75, 30.0)
    assert (settings.comment, settings.dry_run, settings.demo, settings.model_rpm) == (False, True, True, 60)


def test_unknown_variables_are_ignored(tmp_path: Path) -> None:
    environ = {"CONVY_AGENT_TOKEN": "x", "INPUT_SHARDS": "1/2", "CONVY_REPEATS": "9"}
    assert sources(tmp_path, environ=environ).settings() == Settings()


@pytest.mark.parametrize(
    ("name", "flag", "expects"),
    [
        ("max-drop", "1.5", "a number from 0 to 1"),
        ("repeat", "0", "a whole number of 1 or more"),
        ("repeat", "2.5", "a whole number of 1 or more"),
        ("alpha", "1", "a number above 0 and below 1"),
        ("turn-timeout", "0", "a number above 0"),
        ("patience", "-1", "a number of 0 or more"),
        ("comment", "maybe", "true or false"),
    ],
)
def test_a_bad_flag_names_the_setting_and_what_it_expects(
    tmp_path: Path, name: str, flag: str, expects: str
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        sources(tmp_path, {name: flag}).settings()
    assert raised.value.where == f"{name} (--{name})"
    assert raised.value.message == f"must be {expects}"


@pytest.mark.parametrize(
    ("environ", "where"),
    [
        ({"INPUT_MAX-DROP": SECRET}, "max-drop (INPUT_MAX-DROP)"),
        ({"INPUT_MAX_DROP": SECRET}, "max-drop (INPUT_MAX_DROP)"),
        ({"CONVY_MAX_DROP": SECRET}, "max-drop (CONVY_MAX_DROP)"),
    ],
)
def test_a_bad_variable_names_its_source_and_never_its_value(
    tmp_path: Path, environ: dict[str, str], where: str
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        sources(tmp_path, environ=environ).settings()
    assert raised.value.where == where
    assert SECRET not in str(raised.value)
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_a_bad_pyproject_value_names_the_file_and_key_never_the_value(tmp_path: Path) -> None:
    pyproject(tmp_path, f'repeat = "{SECRET}"')
    with pytest.raises(ConfigurationError) as raised:
        sources(tmp_path).settings()
    assert raised.value.where == "pyproject.toml [tool.convy] repeat"
    assert raised.value.message == "must be a whole number of 1 or more"
    assert SECRET not in str(raised.value)


def test_a_bad_value_overridden_by_a_higher_source_is_not_read(tmp_path: Path) -> None:
    pyproject(tmp_path, "repeat = 0")
    assert sources(tmp_path, {"repeat": "2"}).settings().repeat == 2


def test_an_unknown_key_in_pyproject_is_an_error(tmp_path: Path) -> None:
    pyproject(tmp_path, "max_drop = 0.1")
    with pytest.raises(ConfigurationError) as raised:
        sources(tmp_path).settings()
    assert raised.value.where == "pyproject.toml [tool.convy] max_drop"
    assert "not a setting" in raised.value.message


def test_a_secret_in_pyproject_is_refused_without_showing_it(tmp_path: Path) -> None:
    pyproject(tmp_path, f'model-key = "{SECRET}"')
    with pytest.raises(ConfigurationError) as raised:
        sources(tmp_path).settings()
    assert raised.value.where == "pyproject.toml [tool.convy] model-key"
    assert "CONVY_MODEL_KEY" in raised.value.message
    assert SECRET not in str(raised.value)


def test_project_cannot_be_set_in_pyproject(tmp_path: Path) -> None:
    pyproject(tmp_path, 'project = "elsewhere"')
    with pytest.raises(ConfigurationError) as raised:
        sources(tmp_path).settings()
    assert raised.value.where == "pyproject.toml [tool.convy] project"


def test_pyproject_that_is_not_toml_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.convy]\nrepeat = \n", encoding="utf-8")
    with pytest.raises(ConfigurationError) as raised:
        sources(tmp_path).settings()
    assert raised.value.where == "pyproject.toml"


def test_tool_convy_that_is_not_a_table_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool]\nconvy = 3\n", encoding="utf-8")
    with pytest.raises(ConfigurationError) as raised:
        sources(tmp_path).settings()
    assert raised.value.where == "pyproject.toml [tool.convy]"


def test_pyproject_without_tool_convy_gives_the_defaults(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    assert sources(tmp_path).settings() == Settings()


def test_pyproject_is_read_from_the_project_given(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    pyproject(tmp_path / "app", "repeat = 6")
    pyproject(tmp_path, "repeat = 4")
    assert sources(tmp_path, environ={"INPUT_PROJECT": "app"}).settings().repeat == 6
    pyproject(tmp_path / "app", "repeat = 0")
    with pytest.raises(ConfigurationError) as raised:
        sources(tmp_path, {"project": "app"}).settings()
    assert raised.value.where == "app/pyproject.toml [tool.convy] repeat"


def test_the_model_settings_given_are_told_with_their_source(tmp_path: Path) -> None:
    assert sources(tmp_path).models() == ()
    pyproject(tmp_path, 'user-model = "gpt-x"\nrepeat = 2\nmodel-rpm = 10')
    environ = {"CONVY_MODEL_URL": "http://models", "INPUT_MODEL-KEY": SECRET, "INPUT_JUDGE-MODEL": ""}
    assert sources(tmp_path, environ=environ).models() == (
        "model-url (CONVY_MODEL_URL)",
        "model-key (INPUT_MODEL-KEY)",
        "pyproject.toml [tool.convy] user-model",
    )


def test_settings_show_no_secret() -> None:
    settings = Settings(model_key=SECRET, github_token=SECRET, agent_headers=f"Authorization: {SECRET}")
    assert SECRET not in repr(settings) and SECRET not in str(settings)
    assert "model_url='https://api.openai.com/v1'" in repr(settings)


def parser(flags: Flags) -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(prog="convy", exit_on_error=False)
    flags.add_to(made)
    return made


def test_every_setting_is_a_flag_with_its_help() -> None:
    help_text = parser(Flags()).format_help()
    for name, description in DESCRIPTIONS.items():
        assert f"--{name}" in help_text
        assert description.split()[0] in help_text
    assert "(default: 0.05)" in help_text


def test_flags_not_given_are_left_out(tmp_path: Path) -> None:
    flags = Flags()
    assert flags.given(parser(flags).parse_args([])) == {}
    given = flags.given(parser(flags).parse_args(["--repeat", "5", "--model-url=http://m"]))
    assert given == {"repeat": "5", "model-url": "http://m"}
    settings = sources(tmp_path, given).settings()
    assert (settings.repeat, settings.model_url) == (5, "http://m")


def test_a_switch_alone_means_true_and_takes_an_explicit_value(tmp_path: Path) -> None:
    flags = Flags()
    given = flags.given(parser(flags).parse_args(["--dry-run", "--comment=false", "--demo", "false"]))
    settings = sources(tmp_path, given).settings()
    assert (settings.dry_run, settings.comment, settings.demo) == (True, False, False)


def test_a_bad_switch_value_names_the_flag(tmp_path: Path) -> None:
    flags = Flags()
    given = flags.given(parser(flags).parse_args(["--comment=sometimes"]))
    with pytest.raises(ConfigurationError) as raised:
        sources(tmp_path, given).settings()
    assert raised.value.where == "comment (--comment)"


def test_the_engine_command_has_only_the_engine_flags() -> None:
    help_text = parser(Flags(ENGINE)).format_help()
    assert "--max-no-verdict" in help_text and "--patience" in help_text
    assert "--github-token" not in help_text and "--dry-run" not in help_text


def test_an_unknown_flag_name_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as raised:
        sources(tmp_path, {"repeats": "3"}).settings()
    assert raised.value.where == "--repeats"
