"""The settings page of the docs (docs/settings.md), written from the settings themselves: each one's
names in every source, its default, the values it takes and what it means, so the page cannot
drift from the code (a test holds the committed page to this text)."""

from __future__ import annotations

import msgspec

from convy import SETTING_NAMES, Setting
from convy_action.runner.settings import OWN, ActionSettings

INTRODUCTION = """\
# Settings

<!-- Written from the code (convy_action/runner/settings_page.py): do not edit by hand. Regenerate:
.venv/bin/python -c 'import pathlib, convy_action.runner.settings_page as page;
pathlib.Path("docs/settings.md").write_text(page.SettingsPage().text(), encoding="utf-8")' -->

Every setting has one name everywhere: `model-url` is the flag `--model-url` (of `convy run` and of
`python -m convy_action`), the action input `model-url` (`INPUT_MODEL-URL`), the variable
`CONVY_MODEL_URL` and the key `model-url` in `[tool.convy]` of `pyproject.toml`. Precedence: flag >
`INPUT_*` > `CONVY_*` > `[tool.convy]` > default. An input left empty counts as not given.
`convy run --help` lists the engine's settings, `python -m convy_action --help` all of them.

A value that does not fit is exit 2 naming the setting and where it was given, never the value.
Secret settings are masked in every log, never written to a run folder, and refused in
`[tool.convy]` (a file in the repository).
"""


class SettingsPage(msgspec.Struct, frozen=True):
    """docs/settings.md: the engine's settings (`convy run` and the action), then the action's own."""

    def text(self) -> str:
        """The page, as committed."""
        engine = [self.entry(Setting(name, ActionSettings), own=False) for name in SETTING_NAMES]
        action = [self.entry(Setting(name, ActionSettings), own=True) for name in OWN]
        return "\n".join(
            [
                INTRODUCTION,
                "## The engine's settings\n",
                "Settings of `convy run` and of the action alike.\n",
                *engine,
                "## The action's own settings\n",
                "Inputs of the action and flags of `python -m convy_action`, not of `convy run`.\n",
                *action,
            ]
        )

    def entry(self, setting: Setting, own: bool) -> str:
        """One setting's section: its heading (the anchor `settings.md#<name>`), what it means, its
        default, the values it takes and its names."""
        names = [f"input `{setting.name}`", f"variable `{setting.variable}`"]
        names.insert(0, f"flag `{setting.flag}`" + (" (`python -m convy_action`)" if own else ""))
        names.append(
            "secret: not in `[tool.convy]`" if setting.secret else f"`[tool.convy]` key `{setting.name}`"
        )
        lines = [
            f"### {setting.name}",
            "",
            setting.description[0].upper() + setting.description[1:] + ".",
            "",
        ]
        if "default" not in setting.description:
            lines.append(f"- default: {self.default(setting)}")
        if values := self.values(setting):
            lines.append(f"- takes {values}")
        lines.append("- " + " · ".join(names))
        return "\n".join(lines) + "\n"

    def default(self, setting: Setting) -> str:
        """Its default as a reader writes it: `true`, `0.05`, `https://api.openai.com/v1`, empty."""
        match setting.field.default:
            case bool(value):
                return f"`{str(value).lower()}`"
            case float(value):
                return f"`{value:g}`"
            case "":
                return "empty"
            case value:
                return f"`{value}`"

    def values(self, setting: Setting) -> str:
        """The values it takes where its type says more than text: `one of ...`, `a number from 0 to 1`."""
        if setting.choices:
            return "one of " + ", ".join(f"`{value}`" for value in setting.choices)
        match setting.field.type:
            case msgspec.inspect.StrType():
                return ""
            case _:
                return setting.expects()
