"""Inputs: the action's settings as `python -m convy_action` receives them — its command-line flags
and the runner's `INPUT_*` variables (hyphens kept), over `CONVY_*`, `[tool.convy]` and the defaults,
as convy.project.settings reads them; Masks, the secret values the log must hide before anything else."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from convy import ConfigurationError, Flags, Setting, Sources
from convy.tools import SECRET_LENGTH, CommandLine, ExitCodes
from convy_action.runner.settings import NAMES, ActionSettings

if TYPE_CHECKING:
    from convy import Ready


class Inputs(msgspec.Struct, frozen=True):
    """One invocation: its command-line arguments `argv`, its environment `environ`, and `folder`,
    the working directory (the workspace in the action), which `project` is relative to."""

    argv: tuple[str, ...]
    environ: Mapping[str, str]
    folder: Path

    def parser(self) -> CommandLine:
        parser = CommandLine(
            prog="python -m convy_action",
            description=(
                "The convy GitHub Action: play the scenarios, upload the run folder, compare it with "
                "the baseline, post the PR comment and the job summary, and gate. Every input is also a flag."
            ),
            epilog=ExitCodes((0, 1, 2, 3, 130, 143)).text() + ".",
            allow_abbrev=False,
        )
        Flags(NAMES, ActionSettings).add_to(parser)
        return parser

    def flags(self) -> dict[str, object]:
        """The settings given as flags, by hyphenated name; ConfigurationError for an unknown one,
        with the nearest flag where one is close (no flag is taken by an abbreviation)."""
        parser = self.parser()
        namespace, unknown = parser.parse_known_args(list(self.argv))
        if unknown:
            near = parser.nearest(unknown[0])
            hint = f"; did you mean {near}?" if near else ""
            said = f"is not a flag of python -m convy_action{hint} (see --help)"
            raise ConfigurationError(unknown[0], said)
        return Flags(NAMES, ActionSettings).given(namespace)

    def check(self) -> None:
        """ConfigurationError naming an `INPUT_*` variable that is no input of the action (a typo in
        the workflow's `with:` would otherwise be ignored)."""
        known = {variable for name in NAMES for variable in Setting(name, ActionSettings).inputs}
        strange = sorted(key for key in self.environ if key.startswith("INPUT_") and key not in known)
        if strange:
            raise ConfigurationError(
                strange[0],
                "is not an input of the action (inputs: " + ", ".join(NAMES) + ")",
            )

    def sources(self, flags: Mapping[str, object]) -> Sources:
        return Sources(flags, self.environ, self.folder)

    def settings(self, flags: Mapping[str, object]) -> ActionSettings:
        """Every setting's value; ConfigurationError naming the setting and where it was given."""
        self.check()
        return self.sources(flags).settings(ActionSettings)


class Masks(msgspec.Struct, frozen=True):
    """The values of the secret inputs (model-key, judge-key, github-token, the headers) wherever
    they were given — flags, `INPUT_*`, `CONVY_*` — each line of a multi-line one, and each header's
    value; only those of 8 characters or more (shorter ones are not secrets worth corrupting every
    message of the log for)."""

    flags: Mapping[str, object]
    environ: Mapping[str, str]

    def values(self) -> tuple[str, ...]:
        found: list[str] = []
        for name in sorted(ActionSettings.secrets):
            setting = Setting(name, ActionSettings)
            given = [str(self.flags.get(name, ""))]
            given += [self.environ.get(key, "") for key in (*setting.inputs, setting.variable)]
            for value in given:
                for line in value.splitlines():
                    found.append(line.strip())
                    _, colon, rest = line.partition(":")
                    if name in ("agent-headers", "otlp-headers") and colon:
                        found.append(rest.strip())
                        found.append(rest.strip().removeprefix("Bearer ").strip())
        shown: list[str] = []
        for value in found:
            if len(value) >= SECRET_LENGTH and value not in shown:
                shown.append(value)
        return tuple(shown)


class AgentSecrets(msgspec.Struct, frozen=True):
    """The secrets the agent of a `ready` run holds once its variables are read (header values, the
    OAuth2 client secret), masked in the log like the secret inputs: only those of 8 characters or more."""

    ready: Ready

    def values(self) -> tuple[str, ...]:
        secrets = self.ready.secrets()
        return tuple(dict.fromkeys(value for value in secrets if len(value) >= SECRET_LENGTH))
