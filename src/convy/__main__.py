"""`python -m convy`: the convy command, run as a module."""

import sys

from convy.cli import process

sys.exit(process())
