"""Which release of convy this is, as `convy.__version__` and the traces it sends name it."""

from __future__ import annotations

VERSION = "0.4.0"
