"""The README's agent examples, by name."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
EXAMPLE = re.compile(r"<!-- agent-example: ([a-z0-9-]+) -->\n```yaml\n(.*?)```", re.S)


def examples() -> dict[str, str]:
    return dict(EXAMPLE.findall(README.read_text(encoding="utf-8")))
