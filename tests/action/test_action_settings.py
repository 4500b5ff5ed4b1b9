"""The action's own settings extend the engine's: read the one way, and a [tool.convy] shared by
`convy run` and the action holds both without either calling the other's keys unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from convy import ConfigurationError, Settings, Sources
from convy_action.runner.settings import OWN, ActionSettings


def pyproject(folder: Path, table: str) -> None:
    (folder / "pyproject.toml").write_text(f"[tool.convy]\n{table}\n", encoding="utf-8")


def test_the_engine_takes_the_action_s_keys_in_a_shared_file_and_leaves_them_to_it(tmp_path: Path) -> None:
    pyproject(tmp_path, 'repeat = 4\ncomment-when = "failed"\nretention-days = 7')
    engine = Sources({}, {}, tmp_path).settings()
    assert type(engine) is Settings and engine.repeat == 4
    assert not hasattr(engine, "comment_when")
    action = Sources({}, {}, tmp_path).settings(ActionSettings)
    assert (action.repeat, action.comment_when, action.retention_days) == (4, "failed", 7)


def test_a_key_nobody_declares_is_still_an_error_for_the_engine(tmp_path: Path) -> None:
    pyproject(tmp_path, "repeats = 4")
    with pytest.raises(ConfigurationError) as raised:
        Sources({}, {}, tmp_path).settings()
    assert raised.value.where == "pyproject.toml [tool.convy] repeats"


def test_a_secret_of_the_action_is_refused_in_the_file_by_the_engine_too(tmp_path: Path) -> None:
    pyproject(tmp_path, 'github-token = "ghp_not_in_a_file_please"')
    with pytest.raises(ConfigurationError) as raised:
        Sources({}, {}, tmp_path).settings()
    assert "is a secret" in str(raised.value) and "ghp_" not in str(raised.value)


def test_the_action_s_settings_are_its_own_and_its_secrets_are_masked_in_repr() -> None:
    assert "github-token" in OWN and "github-token" not in Settings.descriptions
    shown = repr(ActionSettings(github_token="ghp_secret_value", model_key="sk-secret-value"))
    assert "ghp_secret_value" not in shown and "sk-secret-value" not in shown
    assert shown.startswith("ActionSettings(")
