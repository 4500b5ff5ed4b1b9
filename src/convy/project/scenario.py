"""What one scenario declares, read from YAML: the person the simulated user plays (or the turns it
says), its claims, plain or graded, and its checks.

A check's message starts with the key it is about in backticks (`claims`, `claims[2]`, `grades`):
the file's reader (convy.project.document) points the error at that key's line."""

from __future__ import annotations

import hashlib
from typing import Literal

import msgspec

from convy.data import Declared
from convy.project.catalogue import Catalogue
from convy.project.pattern import Pattern


class Graded(Declared, frozen=True, kw_only=True):
    """A claim the judge answers with one of its grades; each grade says whether it passes."""

    claim: str
    grades: dict[str, bool]

    def __post_init__(self) -> None:
        if not self.claim.strip():
            raise ValueError("`claim` is empty: a graded claim needs its text")
        if not self.grades:
            raise ValueError("`grades` is empty: a graded claim needs its grades")
        if not any(self.grades.values()):
            raise ValueError("`grades` has no passing grade: at least one must map to true")


Claim = str | Graded

STRATEGIES = ("direct", "crescendo", "role-play")
"""How an attacker goes about its goal."""


class Attack(Declared, frozen=True, kw_only=True):
    """What makes a scenario an attack: the attacker's `goal`, the catalogue's `category` it belongs
    to, and its `strategy` (`direct`, `crescendo` — the default — or `role-play`). Empty: no attack."""

    goal: str = ""
    category: str = ""
    strategy: Literal["direct", "crescendo", "role-play"] = "crescendo"

    def __post_init__(self) -> None:
        if not self.category and not self.goal:
            return
        if not self.goal.strip():
            raise ValueError("`goal` is missing or empty: an attack needs what the attacker tries to get")
        catalogue = Catalogue.shipped()
        if self.category not in catalogue.ids:
            said = f"`{self.category}` is" if self.category else "none is given, and it is"
            raise ValueError(f"`category`: {said} not one of the catalogue's: {catalogue.listed()}")

    def __bool__(self) -> bool:
        return bool(self.goal)


MOST_TURNS = 200
"""The most agent answers one attempt may have (a scenario's `max_turns`, the `max-turns` setting)."""


class ArgumentMatch(Declared, frozen=True, kw_only=True):
    """A tool call's argument that must match a regular expression (RE2), not equal a value."""

    matches: str

    def __post_init__(self) -> None:
        problem = Pattern(self.matches).problem()
        if problem:
            raise ValueError(f"`matches` is not a valid regular expression: {problem}")


Argument = str | int | float | bool | None | ArgumentMatch


class ExpectedCall(Declared, frozen=True, kw_only=True):
    """A tool call a check looks for: the tool's `name` and arguments it must have among its own
    (each key with this value, or a value matching `{matches: REGEX}`)."""

    name: str
    args: dict[str, Argument] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("`tool` has no `name`: name the tool the step must call")


KINDS = ("contains", "not_contains", "matches", "tool", "not_tool", "tools")
"""A check's keys, one of which it has."""


class Check(Declared, frozen=True, kw_only=True):
    """A deterministic check of the agent's answers, decided without a model: exactly one of
    `contains` (an answer holds this text), `not_contains` (no answer holds it), `matches` (a
    regular expression found in an answer, run by RE2: Python's syntax without backreferences or
    lookaround, in time linear in the answer), `tool` (a step calling the tool of that name, or a
    mapping `{name, args}`: with those arguments among its own), `not_tool` (no step calls it) or
    `tools` (steps calling these tools in this order, others between allowed); `in: last` looks at
    the last answer (or turn's steps) only, `in: any` (the default) at every one."""

    contains: str = ""
    not_contains: str = ""
    matches: str = ""
    tool: str | ExpectedCall = ""
    not_tool: str = ""
    tools: tuple[str, ...] = ()
    within: Literal["any", "last"] = msgspec.field(default="any", name="in")

    def __post_init__(self) -> None:
        given = [key for key in KINDS if getattr(self, key)]
        if len(given) != 1:
            raise ValueError(
                "`checks` item needs exactly one of "
                + ", ".join(f"`{key}`" for key in KINDS)
                + (f" (it has {', '.join(given)})" if given else "")
            )
        if self.matches:
            problem = Pattern(self.matches).problem()
            if problem:
                raise ValueError(f"`matches` is not a valid regular expression: {problem}")
        if any(not name.strip() for name in self.tools):
            raise ValueError("`tools` has an empty name")

    @property
    def kind(self) -> str:
        """The check's key: `contains`, `not_contains`, `matches`, `tool`, `not_tool` or `tools`."""
        for key in KINDS:
            if getattr(self, key):
                return key
        return "contains"

    @property
    def value(self) -> str:
        """The text, expression or tool name the check looks for (the tools joined by `, `)."""
        match self.kind:
            case "tool":
                return self.call.name
            case "tools":
                return ", ".join(self.tools)
            case kind:
                return str(getattr(self, kind))

    @property
    def call(self) -> ExpectedCall:
        """The call `tool` looks for (a name alone asks for no arguments)."""
        return self.tool if isinstance(self.tool, ExpectedCall) else ExpectedCall(name=self.tool)

    def text(self) -> str:
        """The check as the report lists it beside the claims: `contains "refund" (last answer)`."""
        where = " (last answer)" if self.within == "last" else ""
        turn = " (last turn)" if self.within == "last" else ""
        match self.kind:
            case "matches":
                return f"matches /{self.matches}/{where}"
            case "tool":
                args = ", ".join(
                    f"{key}=/{value.matches}/" if isinstance(value, ArgumentMatch) else f"{key}={value!r}"
                    for key, value in self.call.args.items()
                )
                return f"calls tool {self.call.name}{f' with {args}' if args else ''}{turn}"
            case "not_tool":
                return f"does not call tool {self.not_tool}{turn}"
            case "tools":
                return f"calls tools {' then '.join(self.tools)}, in this order{turn}"
            case "not_contains":
                return f"does not contain {self.not_contains!r}{where}"
            case _:
                return f"contains {self.contains!r}{where}"

    def fingerprinted(self) -> dict[str, object]:
        """What of the check goes into its scenario's fingerprint: the fields a check had before
        `not_tool` and `tools` existed, always, and those only when given (so a scenario's
        fingerprint stays what it was)."""
        part: dict[str, object] = {
            "contains": self.contains,
            "not_contains": self.not_contains,
            "matches": self.matches,
            "tool": self.tool,
            "in": self.within,
        }
        if self.not_tool:
            part["not_tool"] = self.not_tool
        if self.tools:
            part["tools"] = self.tools
        return part


class DraftedFrom(Declared, frozen=True, kw_only=True):
    """Where a scenario was drafted from (`convy draft`, `convy redteam --keep`): a recording's
    `file` or `url`, or a convy `run` folder; the `trace` and `session` of the conversation there,
    and its `index` among that source's conversations (a run's attempt index). Empty: written by
    hand."""

    file: str = ""
    url: str = ""
    run: str = ""
    trace: str = ""
    session: str = ""
    index: int = 0

    def __post_init__(self) -> None:
        if self.index < 0:
            raise ValueError("`source.index` must be 0 or more")
        if sum(bool(where) for where in (self.file, self.url, self.run)) > 1:
            raise ValueError("`source` names more than one of `file`, `url` and `run`: keep one")

    def text(self) -> str:
        """`traces.jsonl, trace 4bf9…, session s-1, #2`; "" for a scenario written by hand."""
        where = self.file or self.url or self.run
        if not where and not self.trace and not self.session:
            return ""
        parts = [where] if where else []
        if self.trace:
            parts.append(f"trace {self.trace}")
        if self.session:
            parts.append(f"session {self.session}")
        parts.append(f"#{self.index}")
        return ", ".join(parts)


class Scenario(Declared, frozen=True, kw_only=True):
    """One scenario: the simulated user's brief and an optional opening or script of user turns,
    then the claims to judge and the checks to make. Without a brief, the script alone is the
    dialogue (no user model is asked)."""

    name: str = ""
    attack: Attack = msgspec.field(default_factory=Attack)
    user: str = ""
    claims: tuple[Claim, ...] = ()
    checks: tuple[Check, ...] = ()
    opening: str = ""
    turns: tuple[str, ...] = ()
    max_turns: int = 0
    tags: tuple[str, ...] = ()
    source: DraftedFrom = DraftedFrom()
    """Where the scenario was drafted from (shown in the report); it plays no part in the dialogue."""

    def __post_init__(self) -> None:
        if not self.user.strip() and not self.turns and not self.opening.strip() and not self.attack:
            raise ValueError(
                "`user` is missing or empty: a scenario needs the simulated user's brief, or scripted `turns`"
            )
        if self.opening and self.turns:
            raise ValueError("`turns` and `opening` together: `opening` is a script of one turn; use one")
        if not self.claims and not self.checks and not self.attack:
            raise ValueError("`claims` is empty: a scenario needs at least one claim or check")
        for index, claim in enumerate(self.claims):
            if isinstance(claim, str) and not claim.strip():
                raise ValueError(f"`claims[{index}]` is empty")
        for index, turn in enumerate(self.turns):
            if not turn.strip():
                raise ValueError(f"`turns[{index}]` is empty")
        if self.max_turns < 0:
            raise ValueError("`max_turns` must be 1 or more (leave it out for the `max-turns` setting)")
        if self.max_turns > MOST_TURNS:
            raise ValueError(
                f"`max_turns` is {self.max_turns}, more than the most a dialogue may have, {MOST_TURNS}"
            )
        if self.max_turns and self.max_turns < len(self.script):
            raise ValueError(
                f"`max_turns` is {self.max_turns}, fewer than the {len(self.script)} scripted turns"
            )

    @property
    def script(self) -> tuple[str, ...]:
        """The fixed user messages said first, in order: `turns`, or the `opening` alone."""
        return self.turns or ((self.opening,) if self.opening else ())

    @property
    def simulated(self) -> bool:
        """Whether a user model speaks after the script (the scenario has a brief, or is an attack
        without scripted `turns`)."""
        return bool(self.user.strip()) or (bool(self.attack) and not self.turns)

    def armed(self) -> Scenario:
        """The scenario as it is judged: an attack without claims takes its category's claim."""
        if not self.attack or self.claims:
            return self
        claim = Catalogue.shipped().category(self.attack.category).claim
        return msgspec.structs.replace(self, claims=(claim,))

    def dialogue(self) -> str:
        """A short hash of what decides how the dialogue plays: brief, opening or turns, max turns,
        the attack's goal and strategy."""
        part: dict[str, object] = {"user": self.user, "opening": self.opening, "max_turns": self.max_turns}
        if self.turns:
            part["turns"] = self.turns
        if self.attack:
            part["attack"] = {"goal": self.attack.goal, "strategy": self.attack.strategy}
        return hashlib.sha256(msgspec.json.encode(part)).hexdigest()[:16]

    def criteria(self) -> str:
        """A short hash of what decides how a dialogue is judged: the claims and the checks."""
        part: dict[str, object] = {"claims": self.claims}
        if self.checks:
            part["checks"] = [check.fingerprinted() for check in self.checks]
        return hashlib.sha256(msgspec.json.encode(part)).hexdigest()[:16]

    def fingerprint(self) -> str:
        """A short hash of everything that decides how the scenario plays and is judged (for a
        scenario without turns or checks, the same as before they existed)."""
        content: dict[str, object] = {
            "user": self.user,
            "opening": self.opening,
            "max_turns": self.max_turns,
            "claims": self.claims,
        }
        if self.turns:
            content["turns"] = self.turns
        if self.checks:
            content["checks"] = [check.fingerprinted() for check in self.checks]
        if self.attack:
            content["attack"] = {
                "goal": self.attack.goal,
                "category": self.attack.category,
                "strategy": self.attack.strategy,
            }
        return hashlib.sha256(msgspec.json.encode(content)).hexdigest()[:16]
