"""The demo's support bot and scripted models started together, each a real HTTP server on loopback."""

from __future__ import annotations

from pathlib import Path
from typing import Self

from convy.demo.localserver import LocalServer
from convy.demo.scripted import ScriptedModels
from convy.demo.supportbot import SupportBot


class DemoServers:
    """The bundled example project and its two servers, started with `with`."""

    def __init__(self) -> None:
        self._agent = LocalServer(SupportBot())
        self._models = LocalServer(ScriptedModels.bundled())

    @property
    def project(self) -> Path:
        return Path(__file__).parent / "project"

    def environ(self) -> dict[str, str]:
        """The variables the demo's agent file reads."""
        return {"CONVY_DEMO_URL": self._agent.url}

    def flags(self) -> dict[str, object]:
        """Settings that point a run at the demo: its project and its scripted models."""
        return {
            "project": str(self.project),
            "model-url": self._models.url,
            "user-model": "scripted-user",
            "judge-model": "scripted-judge",
        }

    def __enter__(self) -> Self:
        self._agent.start()
        self._models.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._agent.stop()
        self._models.stop()
