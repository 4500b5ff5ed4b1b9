"""python -m convy."""

import sys

from convy.cli import main

sys.exit(main())
