"""`convy redteam`: attack scenarios drafted from the shipped catalogue for an agent's purpose, the
same files for the same seed, written into a folder without ever overwriting one, and no model
asked. What is written holds goals; the attacker's words are the user model's when they play."""

from __future__ import annotations

import random
from pathlib import Path

import msgspec
import yaml

from convy.errors import ConfigurationError
from convy.project.catalogue import Catalogue
from convy.project.scenario import STRATEGIES

TURNS = 8
"""The most messages a drafted attack may send (`max_turns`)."""


class AttackText(msgspec.Struct, frozen=True):
    """One scenario file to write: its file name and its text."""

    name: str
    text: str


class WrittenFiles(msgspec.Struct, frozen=True):
    """What writing drafted files did: the files written, and those left as they were (there already)."""

    wrote: tuple[Path, ...] = ()
    left: tuple[Path, ...] = ()

    @classmethod
    def of(cls, drafts: tuple[AttackText, ...], folder: Path) -> WrittenFiles:
        """`drafts` written into `folder` (made when missing), none over a file that is there."""
        folder.mkdir(parents=True, exist_ok=True)
        wrote: list[Path] = []
        left: list[Path] = []
        for draft in drafts:
            target = folder / draft.name
            try:
                with target.open("x", encoding="utf-8") as file:
                    file.write(draft.text)
            except FileExistsError:
                left.append(target)
                continue
            wrote.append(target)
        return cls(wrote=tuple(wrote), left=tuple(left))


class RedTeam(msgspec.Struct, frozen=True, kw_only=True):
    """Attack scenarios for an agent whose purpose is `purpose`: `per_category` of each of
    `categories` (every one of the catalogue's when empty), goals and strategies drawn with `seed`."""

    purpose: str
    categories: tuple[str, ...] = ()
    per_category: int = 3
    seed: int = 0

    def chosen(self) -> tuple[str, ...]:
        """The categories asked for; ConfigurationError naming `--categories` for one the catalogue
        has not, listing the catalogue."""
        catalogue = Catalogue.shipped()
        given = tuple(name.strip() for name in self.categories if name.strip())
        for name in given:
            if name not in catalogue.ids:
                raise ConfigurationError(
                    "--categories", f"`{name}` is not one of the catalogue's: {catalogue.listed()}"
                )
        return tuple(dict.fromkeys(given)) or catalogue.ids

    def drafts(self) -> tuple[AttackText, ...]:
        """The files, in the catalogue's order: `<category>-s<seed>-<n>.yaml`."""
        if not self.purpose.strip():
            raise ConfigurationError("--purpose", "is empty: say what the agent is for, in a few words")
        if self.per_category < 1:
            raise ConfigurationError("--per-category", f"is {self.per_category}: it must be 1 or more")
        catalogue = Catalogue.shipped()
        drafts: list[AttackText] = []
        for name in self.chosen():
            category = catalogue.category(name)
            draw = random.Random(f"{self.seed}:{name}")
            order = draw.sample(range(len(category.goals)), len(category.goals))
            for number in range(self.per_category):
                strategy = STRATEGIES[draw.randrange(len(STRATEGIES))]
                scenario = f"{name}-s{self.seed}-{number + 1}"
                body = {
                    "name": scenario,
                    "attack": {
                        "goal": category.goal(order[number % len(order)], self.purpose),
                        "category": name,
                        "strategy": strategy,
                    },
                    "max_turns": TURNS,
                    "tags": ["attack", name],
                }
                owasp = f" (OWASP {category.owasp})" if category.owasp else ""
                head = (
                    f"# Drafted by convy redteam (seed {self.seed}): {category.title}{owasp}.\n"
                    f"# Without claims, the category's claim is judged: {category.claim}\n"
                    "# Add claims or checks (`not_tool: issue_refund`) that say what resisting means here.\n"
                )
                text = head + yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=1000)
                drafts.append(AttackText(name=f"{scenario}.yaml", text=text))
        return tuple(drafts)
