"""ConfigurationError: what the user must fix before anything is played (exit code 2)."""

from __future__ import annotations


class ConfigurationError(Exception):
    """A bad project, setting or file, found before any request. `where` names the file and line
    (`scenarios/refund.yaml:7`) or the setting (`model-url`); the message never holds a value that
    may be secret."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where
        self.message = message
