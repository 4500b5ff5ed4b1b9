"""What can go wrong in the engine, as exceptions a caller can catch: every one derives from
ConvyError, so `except ConvyError` holds them all.

    ConvyError
     └── ConfigurationError   the user must fix a file or a setting before anything is played (exit 2)
"""

from __future__ import annotations


class ConvyError(Exception):
    """The base of every exception the engine raises on purpose."""


class ConfigurationError(ConvyError):
    """A bad project, setting or file, found before any request. `where` names the file and line
    (`scenarios/refund.yaml:7`) or the setting (`model-url`); the message never holds a value that
    may be secret."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where
        self.message = message
