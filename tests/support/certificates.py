"""A local CA and the certificates it signed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Certificates:
    """A CA, a server certificate for 127.0.0.1 and a client certificate it signed, in `folder`."""

    folder: Path

    def path(self, name: str) -> str:
        return str(self.folder / name)
