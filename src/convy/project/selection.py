"""Which scenarios a client of the engine plays: those of the project's files it names (all of them
when it names none), and scenarios it declares itself (written in Python), after the `match` setting
has chosen among the files'."""

from __future__ import annotations

import msgspec

from convy.errors import ConfigurationError
from convy.project.document import Declaration


class Selection(msgspec.Struct, frozen=True, kw_only=True):
    """`names`: the scenarios of the project's files to play, each as `<file>::<scenario name>`
    (`scenarios/refund.yaml::refund-after-30-days`; empty: every one, unless `named`); `added`:
    scenarios declared outside the project's files, played after them in their order; `named`:
    only the `names` are played of the files' scenarios, none when there are none (the pytest
    plugin's selection)."""

    names: tuple[str, ...] = ()
    added: tuple[Declaration, ...] = ()
    named: bool = False

    @property
    def whole(self) -> bool:
        """Whether every scenario of the project's files is chosen."""
        return not self.names and not self.named

    def chosen(self, declarations: tuple[Declaration, ...]) -> tuple[Declaration, ...]:
        """The `declarations` named (all when none is), then the added ones; ConfigurationError
        naming a scenario that is not among them, or a name used twice."""
        if self.names or self.named:
            keys = {f"{d.file}::{d.scenario.name}": d for d in declarations}
            for name in self.names:
                if name not in keys:
                    raise ConfigurationError(
                        name, f"is not a scenario of the project ({len(keys)} scenarios)"
                    )
            wanted = set(self.names)
            declarations = tuple(d for d in declarations if f"{d.file}::{d.scenario.name}" in wanted)
        taken = {d.scenario.name: d for d in declarations}
        for declaration in self.added:
            name = declaration.scenario.name
            if name in taken:
                raise ConfigurationError(
                    declaration.where,
                    f"the scenario name `{name}` is used twice: {taken[name].where} and {declaration.where}",
                )
            taken[name] = declaration
        return (*declarations, *self.added)
