"""The bases every record of convy derives from: what convy writes and reads back, a member of a
closed union told apart by its tag, and what a user declares in a file."""

from __future__ import annotations

import msgspec


class Data(msgspec.Struct, frozen=True, kw_only=True):
    """A record convy writes and reads back: frozen, fields by keyword, unknown fields ignored
    (a newer writer may add fields; see docs/decisions/0004-run-folder-format.md)."""


class Tagged(Data, frozen=True, kw_only=True, tag_field="type"):
    """A member of a closed union, told apart on disk by its `type` tag (snake_case class name)."""


class Declared(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Something a user declares in a file (a scenario, an agent, settings): unknown keys are errors."""
