"""Where a scenario is in report.html (`report.html#scenario-refund-late-order-3f2a1c`), the same
for the comment's links and the page's rows: letters, digits and `-` only, whatever the name."""

from __future__ import annotations

import hashlib
import re

import msgspec

UNSAFE = re.compile(r"[^a-z0-9]+")

SIDE_BY_SIDE = frozenset({"regressed", "lower", "improved", "higher", "rejudged"})
"""The statuses whose scenarios comparison.html shows a baseline attempt beside one of this run, in
the block `diff-<anchor>` (sidebyside.py), where the comment links them."""


class Anchor(msgspec.Struct, frozen=True):
    """A scenario's place in its run's report page."""

    name: str

    def id(self) -> str:
        """The row's id: `scenario-` + the name made safe (at most 60 characters) + 6 hex digits of
        the name's hash, so two names that look alike once made safe stay apart."""
        safe = UNSAFE.sub("-", self.name.lower()).strip("-")[:60].strip("-")
        digest = hashlib.sha256(self.name.encode("utf-8")).hexdigest()[:6]
        return f"scenario-{safe}-{digest}" if safe else f"scenario-{digest}"

    def diff(self) -> str:
        """The id of the scenario's side-by-side block in comparison.html: `diff-` + its id."""
        return f"diff-{self.id()}"

    def link(self) -> str:
        """The link from the comment, relative to the run folder."""
        return f"report.html#{self.id()}"
