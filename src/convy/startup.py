"""What a command built on the engine does to its process before anything else, so that it starts
fast and writes any text (decision 12)."""

from __future__ import annotations

import importlib.util
import sys


class Startup:
    """The process as a command wants it: imports that would only cost time turned off, and the
    standard streams writing UTF-8 whatever the locale."""

    def prepared(self) -> None:
        if importlib.util.find_spec("sniffio") is None:
            # httpcore imports sniffio at every request; absent, let that import fail at once
            sys.modules.setdefault("sniffio", None)  # type: ignore[arg-type]
        # httpx's own command line (httpx._main) is never used here, but importing httpx loads click,
        # pygments and rich for it wherever they are installed: tens of milliseconds
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
        for stream in (sys.stdout, sys.stderr):
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(encoding="utf-8", errors="replace")
