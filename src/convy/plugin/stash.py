"""Where a pytest session keeps the plugin's state: in the config's stash, set only once `--convy`
asks for the plugin (so an unrelated session has none)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from convy.plugin.state import Sitting

SITTING = pytest.StashKey["Sitting"]()
"""The session's convy state."""


class Stashed:
    """The plugin's state in `config`, if the session asked for it."""

    def __init__(self, config: pytest.Config) -> None:
        self._config = config

    def asked(self) -> bool:
        """Whether this session plays convy scenarios (`--convy`, `--convy-demo`, ini `convy`)."""
        config = self._config
        return bool(config.getoption("convy") or config.getoption("convy_demo") or config.getini("convy"))

    def sitting(self) -> Sitting | None:
        return self._config.stash.get(SITTING, None)

    def keep(self, sitting: Sitting) -> None:
        self._config.stash[SITTING] = sitting
