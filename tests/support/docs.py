"""The project's docs as the tests read them: the README and every page under docs/ (the decision
records aside: they are history, not instructions), and the fenced blocks in them, each with its page
and line. A page added under docs/ is read, and its examples checked, with no change here."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.M | re.S)
MARKER = re.compile(r"<!-- agent-example: ([a-z0-9-]+) -->\n$")


class Block(msgspec.Struct, frozen=True):
    """A fenced block of a page: its language, its text (dedented as a reader copies it), where it
    starts, and the agent example it is, when the line above names one."""

    page: Path
    line: int
    language: str
    text: str
    example: str = ""

    @property
    def where(self) -> str:
        """`docs/agents.md:123`, the line of its opening fence."""
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"


def pages() -> list[Path]:
    """The README, then every page of docs/ in path order, the decision records left out."""
    found = sorted(path for path in DOCS.rglob("*.md") if DOCS / "decisions" not in path.parents)
    return [README, *found]


def blocks(language: str | None = None) -> list[Block]:
    """Every fenced block of every page, in order (only those of `language` when given)."""
    found = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            before = text[: match.start()]
            marker = MARKER.search(before)
            block = Block(
                page=page,
                line=before.count("\n") + 1,
                language=match[2],
                text=textwrap.dedent(match[3]),
                example=marker[1] if marker else "",
            )
            if language is None or block.language == language:
                found.append(block)
    return found


def page(name: str) -> str:
    """The text of docs/<name>."""
    return (DOCS / name).read_text(encoding="utf-8")
