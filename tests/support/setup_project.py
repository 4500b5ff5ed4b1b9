"""A project of three scenarios, and a port nothing listens on."""

from __future__ import annotations

import socket
from pathlib import Path

SCENARIOS = {f"s{n}": f"name: s{n}\nturns: [hello]\nchecks: [{{contains: echo}}]\n" for n in range(3)}


def project(folder: Path) -> Path:
    (folder / "scenarios").mkdir(parents=True)
    for name, text in SCENARIOS.items():
        (folder / "scenarios" / f"{name}.yaml").write_text(text)
    return folder


def closed_port() -> int:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port: int = unused.getsockname()[1]
    return port
