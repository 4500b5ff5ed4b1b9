"""What a command built on the engine does to its process before anything else, so that it starts
fast and writes any text (decision 12)."""

from __future__ import annotations

import gc
import importlib.util
import sys

YOUNG = 10_000
"""The objects allocated (less those freed) between two passes of the cyclic collector during a run."""


class Startup:
    """The process as a command wants it: imports that would only cost time turned off, the
    standard streams writing UTF-8 whatever the locale, and an exit that does not walk every object
    once more."""

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

    def settled(self) -> None:
        """What the process made so far (its modules, the project read) lives until it ends: the
        cyclic collector stops walking it on each of its passes while the run plays, and passes
        less often (every YOUNG allocations, not 700: a run's objects are freed by their count of
        references, and a pass finds next to no cycles). For a command's process, where the run is
        the last thing it does."""
        gc.freeze()
        gc.set_threshold(YOUNG, 10, 10)

    def ending(self) -> None:
        """The process is about to exit: what it holds is kept out of the cyclic collector, so the
        interpreter's shutdown does not walk every module's objects (tens of milliseconds after a
        run). Exit handlers still run, and every file was closed where it was written. Only for a
        process that ends now: in a longer one, garbage frozen here would never be collected."""
        gc.disable()
        gc.freeze()
