"""How a face of the engine (`convy`, `convy.runs`, `convy.labels`, `convy.tools`) gives its names:
each loaded from its home module on first use, so a command that needs few of them starts fast."""

from __future__ import annotations

import importlib
from collections.abc import Mapping


class Face:
    """The public names of `package`, by home module: `{"convy.conduct.plan": ("Opened", "Plan")}`;
    a name given under another than its home's reads `HOME as NAME` (`"ENGINE as SETTING_NAMES"`)."""

    def __init__(self, package: str, homes: Mapping[str, tuple[str, ...]]) -> None:
        self._package = package
        self._homes: dict[str, tuple[str, str]] = {}
        for module, names in homes.items():
            for name in names:
                home, _, public = name.partition(" as ")
                self._homes[public or home] = (module, home)

    def names(self) -> list[str]:
        """The face's `__all__`: its names, sorted."""
        return sorted(self._homes)

    def attribute(self, name: str) -> object:
        """The face's `__getattr__`: the named object, its home imported now."""
        if name not in self._homes:
            raise AttributeError(f"module {self._package!r} has no attribute {name!r}")
        module, home = self._homes[name]
        return getattr(importlib.import_module(module), home)
