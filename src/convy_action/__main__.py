"""python -m convy_action: the action's entry point. `--help` answers before the action's modules
(HTTP, the engine's run, the renderers) are loaded, so it is instant."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path


def main(argv: Sequence[str] | None = None) -> int:
    """The action's entry point."""
    from convy.tools import Startup

    Startup().prepared()
    arguments = tuple(sys.argv[1:] if argv is None else argv)
    if {"-h", "--help"} & set(arguments):
        from convy_action.runner.inputs import Inputs

        Inputs(arguments, os.environ, Path.cwd()).parser().print_help()
        return 0
    from convy_action.action import Action

    return Action(arguments, os.environ, sys.stdout, Path.cwd()).exit_code()


if __name__ == "__main__":
    code = main()
    from convy.tools import Startup

    Startup().ending()
    sys.exit(code)
