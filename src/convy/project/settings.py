"""Settings and where they come from (command-line flags > INPUT_* > CONVY_* > [tool.convy] >
defaults), read into one Settings value that every part of a run is given. A program built on the
engine (the action) extends Settings with its own settings and reads them the same way.

Every setting has one name everywhere: `model-url` is the flag `--model-url`, the input
`INPUT_MODEL-URL` (the runner keeps hyphens; `INPUT_MODEL_URL` is read too), the variable
`CONVY_MODEL_URL` and the key `model-url` in `[tool.convy]`. A bad value is a ConfigurationError naming
the setting and its source, never the value, which may be a secret."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Annotated, ClassVar, Literal

import msgspec
from msgspec import Meta

from convy.data import Declared
from convy.errors import ConfigurationError
from convy.project.jury import Panel, Votes
from convy.project.names import SETTING_DESCRIPTIONS, SETTING_NAMES, SETTING_SECRETS
from convy.project.prices import PriceTable
from convy.project.scenarios import Matching


class Unchosen(float):
    """A setting's default number, told apart from the same number given by a source: a rule may
    hold back its default where it has too little to go on, and keep its full meaning for a value
    someone chose (`min-judge-kappa`). It compares, prints and computes as the number; a value read
    from any source is a plain float."""


MIN_JUDGE_KAPPA = Unchosen(0.4)
"""`min-judge-kappa`'s default: Cohen's κ of 0.4 is where moderate agreement begins."""


class Settings(Declared, frozen=True, kw_only=True, rename="kebab"):
    """Every setting's value, the defaults docs/settings.md lists where none was given. Fields are
    snake_case; their external names are hyphenated (`max_drop` is `max-drop`). A program's own
    settings extend it: a subclass with more fields, its `descriptions` (every setting's, in the
    order of the fields) and `secrets`."""

    descriptions: ClassVar[Mapping[str, str]] = SETTING_DESCRIPTIONS
    """What each setting means, by its hyphenated name, in the order of the fields."""
    secrets: ClassVar[frozenset[str]] = SETTING_SECRETS
    """The settings masked in logs, never written, refused in [tool.convy]."""

    project: str = "."
    scenarios: str = "scenarios"
    match: str = ""
    agent: str = ""
    agent_url: str = ""
    agent_body: str = ""
    agent_answer: str = ""
    agent_headers: str = ""
    agent_protocol: Literal[
        "", "openai-chat", "openai-responses", "a2a", "ag-ui", "vercel-ai", "template"
    ] = ""
    agent_stream: Literal["none", "sse", "ndjson", "text"] = "none"
    agent_model: str = ""
    model_url: str = "https://api.openai.com/v1"
    model_key: str = ""
    user_model: str = ""
    judge_model: str = ""
    judge_url: str = ""
    judge_key: str = ""
    system_role: Literal["system", "inline"] = "system"
    user_max_tokens: Annotated[int, Meta(ge=1)] = 400
    judge_max_tokens: Annotated[int, Meta(ge=1)] = 1500
    judge_votes: str = "1"
    vote_temperature: Annotated[float, Meta(ge=0, le=2)] = 1.0
    judge_panel: str = ""
    model_timeout: Annotated[float, Meta(gt=0)] = 120.0
    repeat: Annotated[int, Meta(ge=1)] = 3
    max_repeat: Annotated[int, Meta(ge=0)] = 0
    """0: the same as `repeat` (no more attempts)."""
    rejudge: bool = True
    replay: Literal["none", "user"] = "none"
    concurrency: Annotated[int, Meta(ge=1)] = 8
    min_pass_rate: Annotated[float, Meta(ge=0, le=1)] = 0.0
    max_drop: Annotated[float, Meta(ge=0, le=1)] = 0.05
    alpha: Annotated[float, Meta(gt=0, lt=1)] = 0.05
    max_no_verdict: Annotated[float, Meta(ge=0, le=1)] = 0.2
    max_failed: Annotated[float, Meta(ge=0, le=1)] = 0.1
    min_judge_kappa: Annotated[float, Meta(ge=0, le=1)] = MIN_JUDGE_KAPPA
    """0: the judge-untrusted rule is off. Left at its default, it applies only once `min_labels`
    decisions are labelled and κ is defined."""
    min_labels: Annotated[int, Meta(ge=1)] = 20
    labels: str = "labels"
    """`none`: no calibration; a folder that does not exist: none either."""
    fail_fast: bool = True
    budget: Annotated[float, Meta(ge=0)] = 0.0
    prices: str = ""
    results: str = "results"
    junit: str = ""
    """"": no JUnit XML file."""
    agent_version_url: str = ""
    agent_version_path: str = ""
    expect_agent_version: str = ""
    agent_version_wait: Annotated[float, Meta(ge=0)] = 600.0
    max_turns: Annotated[int, Meta(ge=1, le=200)] = 8
    turn_timeout: Annotated[float, Meta(gt=0)] = 120.0
    patience: Annotated[float, Meta(ge=0)] = 300.0
    model_rpm: Annotated[int, Meta(ge=0)] = 0
    agent_rpm: Annotated[int, Meta(ge=0)] = 0
    trace_context: bool = True
    trace_url: str = ""
    shard: str = ""

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{field.name}={'***' if field.encode_name in self.secrets else repr(getattr(self, field.name))}"
            for field in msgspec.structs.fields(self)
        )
        return f"{type(self).__name__}({shown})"

    def price_table(self) -> PriceTable:
        """The `prices` setting read (checked already where it was given)."""
        return PriceTable.read(self.prices)

    def votes(self) -> Votes:
        """The `judge-votes` setting read (checked already where it was given)."""
        return Votes.read(self.judge_votes)

    def panel(self) -> Panel:
        """The `judge-panel` setting read (checked already where it was given)."""
        return Panel.read(self.judge_panel)

    def matching(self) -> Matching:
        """The `match` setting as globs."""
        return Matching(tuple(self.match.split(",")))


KINDS: dict[type[Settings], msgspec.inspect.Type] = {}
"""Each kind of Settings' fields as msgspec sees them (types, constraints), read once."""


class Setting(msgspec.Struct, frozen=True):
    """One setting of `kind` (Settings, or a program's extension of it), by its hyphenated name,
    with its names in each source."""

    name: str
    kind: type[Settings] = Settings

    def __post_init__(self) -> None:
        if self.name not in self.kind.descriptions:
            raise ValueError(f"`{self.name}` is not a setting")

    @property
    def field(self) -> msgspec.inspect.Field:
        """Its field in its kind of Settings: type, constraints, default."""
        if self.kind not in KINDS:
            KINDS[self.kind] = msgspec.inspect.type_info(self.kind)
        match KINDS[self.kind]:
            case msgspec.inspect.StructType(fields=fields):
                return next(field for field in fields if field.encode_name == self.name)
            case _:
                raise TypeError("Settings is a Struct")

    @property
    def attribute(self) -> str:
        """Its Python name, a field of Settings: `model_url`."""
        return self.name.replace("-", "_")

    @property
    def flag(self) -> str:
        """`--model-url`."""
        return f"--{self.name}"

    @property
    def inputs(self) -> tuple[str, ...]:
        """Its runner input variables: `INPUT_MODEL-URL` as the runner sets it, then `INPUT_MODEL_URL`."""
        kept = f"INPUT_{self.name.upper()}"
        underscored = kept.replace("-", "_")
        return (kept, underscored) if underscored != kept else (kept,)

    @property
    def variable(self) -> str:
        """`CONVY_MODEL_URL`."""
        return f"CONVY_{self.name.upper().replace('-', '_')}"

    @property
    def description(self) -> str:
        return self.kind.descriptions[self.name]

    @property
    def secret(self) -> bool:
        return self.name in self.kind.secrets

    @property
    def switch(self) -> bool:
        """Whether it is true or false (`--fail-fast` alone means true)."""
        match self.field.type:
            case msgspec.inspect.BoolType():
                return True
            case _:
                return False

    @property
    def choices(self) -> tuple[str, ...]:
        """The values it takes when it takes only some (`agent-stream`: none, sse, …); none for
        another setting. An empty value, which leaves it unset, is allowed but not named."""
        match self.field.type:
            case msgspec.inspect.LiteralType(values=values):
                return tuple(str(value) for value in values if value != "")
            case _:
                return ()

    def expects(self) -> str:
        """What a value must be, without any value read: `a number from 0 to 1`."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        match self.field.type:
            case msgspec.inspect.BoolType():
                return "true or false"
            case msgspec.inspect.IntType(ge=ge, gt=gt, le=le, lt=lt):
                return Bounds(ge, gt, le, lt).phrase("a whole number")
            case msgspec.inspect.FloatType(ge=ge, gt=gt, le=le, lt=lt):
                return Bounds(ge, gt, le, lt).phrase("a number")
            case _:
                return "text"

    def check(self, value: object, where: str) -> None:
        """ConfigurationError at `where` when the value does not fit the setting (the value not shown)."""
        try:
            msgspec.convert({self.name: value}, self.kind, strict=False)
        except msgspec.ValidationError:
            raise ConfigurationError(where, f"must be {self.expects()}") from None
        if self.name == "prices":
            PriceTable.read(str(value), where)
        if self.name == "judge-votes":
            Votes.read(str(value), where)
        if self.name == "judge-panel":
            Panel.read(str(value), where)


class Bounds(msgspec.Struct, frozen=True):
    """The range a number must be in, as msgspec's constraints state it."""

    ge: int | float | None
    gt: int | float | None
    le: int | float | None
    lt: int | float | None

    def phrase(self, kind: str) -> str:
        """`a number from 0 to 1`, `a whole number of 1 or more`, `a number above 0 and below 1`."""
        if self.ge is not None and self.le is not None:
            return f"{kind} from {self.ge:g} to {self.le:g}"
        parts = (
            f"{self.ge:g} or more" if self.ge is not None else "",
            f"above {self.gt:g}" if self.gt is not None else "",
            f"{self.le:g} or less" if self.le is not None else "",
            f"below {self.lt:g}" if self.lt is not None else "",
        )
        bounds = " and ".join(part for part in parts if part)
        if not bounds:
            return kind
        return f"{kind} of {bounds}" if bounds[0].isdigit() or bounds[0] == "-" else f"{kind} {bounds}"


class Flags(msgspec.Struct, frozen=True):
    """The command-line flags of some settings of `kind` (default: the engine's), one `--<name>`
    each; a true/false setting's flag alone means true (`--fail-fast`), or takes a value
    (`--fail-fast=false`)."""

    names: tuple[str, ...] = SETTING_NAMES
    kind: type[Settings] = Settings

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        """Adds the flags to `parser`; a flag not given leaves no attribute on the parsed namespace."""
        for name in self.names:
            setting = Setting(name, self.kind)
            match setting.field.default:
                case bool(default):
                    shown = f" (default: {str(default).lower()})"
                case float(default):
                    shown = f" (default: {default:g})"
                case default:
                    shown = f" (default: {default})" if str(default) else ""
            if "default" in setting.description:
                shown = ""  # the description says its default itself (`none` (default), max-repeat)
            help_text = (setting.description + shown).replace("%", "%%")
            if setting.switch:
                parser.add_argument(
                    setting.flag,
                    dest=setting.attribute,
                    nargs="?",
                    const="true",
                    metavar="true|false",
                    default=argparse.SUPPRESS,
                    help=help_text,
                )
            else:
                parser.add_argument(
                    setting.flag,
                    dest=setting.attribute,
                    metavar=name.upper().replace("-", "_"),
                    default=argparse.SUPPRESS,
                    help=help_text,
                )

    def given(self, namespace: argparse.Namespace) -> dict[str, object]:
        """The flags given on the command line, by hyphenated name: the `flags` of Sources."""
        return {
            name: getattr(namespace, Setting(name, self.kind).attribute)
            for name in self.names
            if hasattr(namespace, Setting(name, self.kind).attribute)
        }
