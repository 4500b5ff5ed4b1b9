"""User-written regular expressions (a scenario check's `matches`), run by RE2, an engine without
backtracking: a search takes time linear in the text whatever the pattern, so no pattern can hang a
run or keep a signal from stopping it (decision 26)."""

from __future__ import annotations

import functools
from typing import Any

import msgspec


class Pattern(msgspec.Struct, frozen=True, dict=True):
    """A regular expression in RE2's syntax (Python's `re` without backreferences and lookaround)."""

    text: str

    def problem(self) -> str:
        """Why the expression cannot be used ("" when it can)."""
        import re2  # type: ignore[import-untyped]  # loaded only for scenarios with patterns

        try:
            _ = self.compiled
        except re2.error as error:
            said = error.args[0] if error.args else ""
            reason = said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said)
            return f"{reason} (the expression is run by RE2: no backreferences or lookaround)"
        return ""

    @functools.cached_property
    def compiled(self) -> Any:
        """The expression compiled by RE2 (which logs nothing of its own)."""
        import re2

        options = re2.Options()
        options.log_errors = False
        return re2.compile(self.text, options=options)

    def search(self, text: str) -> bool:
        """Whether the expression is found anywhere in `text` (as `re.search`)."""
        return bool(self.compiled.search(text) is not None)
