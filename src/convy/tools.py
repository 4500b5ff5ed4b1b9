"""What a command built on the engine shares with convy's own: its start-up, its strict command line
and exit codes, the way it shows untrusted text and counts words, the bases of its records and its
files written whole. Names load on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from convy.lazy import Face

_FACE = Face(
    "convy.tools",
    {
        # a command's start, its command line and its exit codes
        "convy.startup": ("Startup",),
        "convy.project.commandline": ("CommandLine", "ExitCodes", "Subcommand"),
        # text: untrusted text shown safely, counted words, secrets long enough to hide
        "convy.draw.untrusted": ("Untrusted",),
        "convy.words": ("Plural",),
        "convy.play.errorbody": ("SECRET_LENGTH",),
        # records and files: the bases of convy's records, a file written whole or not at all
        "convy.data": ("Data", "Tagged"),
        "convy.store.atomic": ("AtomicFile",),
    },
)

__all__ = _FACE.names()  # noqa: PLE0605 - each name is written once, in _FACE

if TYPE_CHECKING:
    from convy.data import Data as Data
    from convy.data import Tagged as Tagged
    from convy.draw.untrusted import Untrusted as Untrusted
    from convy.play.errorbody import SECRET_LENGTH as SECRET_LENGTH
    from convy.project.commandline import CommandLine as CommandLine
    from convy.project.commandline import ExitCodes as ExitCodes
    from convy.project.commandline import Subcommand as Subcommand
    from convy.startup import Startup as Startup
    from convy.store.atomic import AtomicFile as AtomicFile
    from convy.words import Plural as Plural

__getattr__ = _FACE.attribute
