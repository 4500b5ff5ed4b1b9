"""Settings and where they come from: Setting (one setting and its names), Settings (every value),
Sources (command-line flags > INPUT_* > CONVY_* > [tool.convy] > defaults), Flags (the argparse side),
and DESCRIPTIONS, the one table of what each setting means (the flags' help, action.yml's inputs).

Every setting has one name everywhere: `model-url` is the flag `--model-url`, the input
`INPUT_MODEL-URL` (the runner keeps hyphens; `INPUT_MODEL_URL` is read too), the variable
`CONVY_MODEL_URL` and the key `model-url` in `[tool.convy]`. A bad value is a ConfigurationError naming
the setting and its source, never the value, which may be a secret."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from convy.data import Declared
from convy.errors import ConfigurationError
from convy.project.scenarios import Matching

# What each setting means, in the order of Settings: the flags' help and action.yml's descriptions.
DESCRIPTIONS: dict[str, str] = {
    "project": "the user's project folder",
    "scenarios": "folder or glob of scenario files, relative to the project",
    "match": "comma-separated globs over scenario names and tags (default: every scenario)",
    "agent": "which agent to play (default: the only one, or `agent` for agent-url)",
    "agent-url": "a declarative agent without files: its full endpoint URL",
    "agent-body": "the declarative agent's JSON body template ($messages, $message, $conversation)",
    "agent-answer": "the dotted path of the answer in the declarative agent's response JSON",
    "agent-headers": "the declarative agent's request headers, one `Name: value` per line (secret)",
    "agent-protocol": (
        "what the declarative agent speaks: `openai-chat`, `openai-responses`, `a2a` or `template` "
        "(default: template when agent-body or agent-answer is given, else openai-chat)"
    ),
    "agent-stream": (
        "how the declarative agent streams its answers: `none` (default), `sse`, `ndjson` or `text`"
    ),
    "agent-model": (
        "the `model` sent to an openai-chat or openai-responses agent (gateways such as LiteLLM need it)"
    ),
    "model-url": "OpenAI-compatible base URL of the simulated user's and the judge's models",
    "model-key": "API key of the models (secret)",
    "user-model": "the simulated user's model name",
    "judge-model": "the judge's model name (default: the user model)",
    "judge-url": "OpenAI-compatible base URL of the judge's model (default: model-url)",
    "judge-key": "API key of the judge's model (secret; default: model-key)",
    "system-role": (
        "`system` (default) or `inline`: the system text put at the start of the first user message,"
        " for models without a system role"
    ),
    "user-max-tokens": "most tokens the simulated user's model may write in one reply",
    "judge-max-tokens": "most tokens the judge's model may write in one reply",
    "model-timeout": "seconds a model may take to answer one request (apart from turn-timeout, the agent's)",
    "repeat": "attempts per scenario",
    "max-repeat": (
        "with a baseline, scenarios whose comparison is unclear after `repeat` attempts get more, up to "
        "this many (default: `repeat`, which turns it off)"
    ),
    "rejudge": (
        "with a baseline, re-judge its dialogues of scenarios whose claims or checks changed (or all, "
        "when the judge model changed), so they are still compared"
    ),
    "concurrency": "conversations at once",
    "min-pass-rate": "absolute floor of the pass rate (0..1); 0 turns it off",
    "max-drop": "largest allowed drop of the pass rate versus the baseline (0..1)",
    "alpha": "a drop counts only when significant at this level (between 0 and 1)",
    "max-no-verdict": "above this share of attempts without verdict the run is inconclusive (0..1)",
    "max-failed": "above this share of attempts the agent failed (HTTP errors, timeouts) the gate fails",
    "fail-fast": "stop starting attempts when the first 5 to end all failed or got no verdict for one cause",
    "results": "where run folders go, relative to the project",
    "agent-version-url": "a URL (GET, with the agent's headers) whose answer names the agent's build",
    "agent-version-path": "the dotted path of the build in agent-version-url's JSON answer",
    "expect-agent-version": "wait until the agent's build contains this text (e.g. the PR's head SHA)",
    "agent-version-wait": "seconds to wait for expect-agent-version before exit 2",
    "max-turns": "most agent answers in one attempt; a scenario's own max_turns wins",
    "turn-timeout": "seconds for opening a conversation, each turn, and closing it",
    "patience": "seconds a participant waits for a busy service (429/503)",
    "model-rpm": "requests per minute to the models; 0 is no limit",
    "agent-rpm": "requests per minute to the agent; 0 is no limit",
    "shard": (
        "play one slice of the scenarios, `k/n` (1-based): scenario i (0-based, in declaration order) "
        "belongs to shard (i mod n) + 1"
    ),
    "baseline": "`auto`, `none`, a workflow run id, or (dry runs) a local run folder",
    "baseline-branch": "where `auto` looks (default: the PR's base branch, else the default branch)",
    "artifact-name": "the run folder's artifact (default: convy-<agent>)",
    "retention-days": "days the artifact is kept; 0 is the repository's setting",
    "comment": "post or update the PR comment",
    "comment-key": (
        "a key that keeps this job's comment and artifact apart from other jobs' (matrix legs): "
        "the marker becomes <!-- convy-action:<agent>:<key> -->, the artifact convy-<agent>-<key>"
    ),
    "comment-when": (
        "when to post a new comment: `always`, `changed` (the verdict is not pass or a scenario is "
        "not unchanged) or `failed` (fail or inconclusive); an existing comment is always updated"
    ),
    "merge": (
        "merge the shards' artifacts of this workflow run into one run, upload it, compare, comment "
        "and gate (the job after the shard jobs)"
    ),
    "github-token": "token with `actions: read` and `pull-requests: write` (secret)",
    "dry-run": "play, compare and render, but upload and post nothing",
    "demo": "play the bundled example project against a built-in demo agent, without keys or network",
}

# The settings of the engine (convy run); the others belong to the action.
ENGINE: tuple[str, ...] = (
    "project",
    "scenarios",
    "match",
    "agent",
    "agent-url",
    "agent-body",
    "agent-answer",
    "agent-headers",
    "agent-protocol",
    "agent-stream",
    "agent-model",
    "model-url",
    "model-key",
    "user-model",
    "judge-model",
    "judge-url",
    "judge-key",
    "system-role",
    "user-max-tokens",
    "judge-max-tokens",
    "model-timeout",
    "repeat",
    "max-repeat",
    "rejudge",
    "concurrency",
    "min-pass-rate",
    "max-drop",
    "alpha",
    "max-no-verdict",
    "max-failed",
    "fail-fast",
    "results",
    "agent-version-url",
    "agent-version-path",
    "expect-agent-version",
    "agent-version-wait",
    "max-turns",
    "turn-timeout",
    "patience",
    "model-rpm",
    "agent-rpm",
    "shard",
)
ACTION: tuple[str, ...] = (
    "baseline",
    "baseline-branch",
    "artifact-name",
    "retention-days",
    "comment",
    "comment-key",
    "comment-when",
    "merge",
    "github-token",
    "dry-run",
    "demo",
)
# Masked in logs, never written, refused in [tool.convy] (a file in the repository).
SECRETS: frozenset[str] = frozenset({"model-key", "judge-key", "github-token", "agent-headers"})
# The settings that define the models: with a models.py as well, the project is exit 2.
MODELS: tuple[str, ...] = ("model-url", "model-key", "user-model", "judge-model", "judge-url", "judge-key")


class Settings(Declared, frozen=True, kw_only=True, rename="kebab"):
    """Every setting's value, the defaults of DESIGN §6 and §12 where none was given. Fields are
    snake_case; their external names are hyphenated (`max_drop` is `max-drop`)."""

    project: str = "."
    scenarios: str = "scenarios"
    match: str = ""
    agent: str = ""
    agent_url: str = ""
    agent_body: str = ""
    agent_answer: str = ""
    agent_headers: str = ""
    agent_protocol: Literal["", "openai-chat", "openai-responses", "a2a", "template"] = ""
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
    model_timeout: Annotated[float, Meta(gt=0)] = 120.0
    repeat: Annotated[int, Meta(ge=1)] = 3
    max_repeat: Annotated[int, Meta(ge=0)] = 0
    """0: the same as `repeat` (no more attempts)."""
    rejudge: bool = True
    concurrency: Annotated[int, Meta(ge=1)] = 8
    min_pass_rate: Annotated[float, Meta(ge=0, le=1)] = 0.0
    max_drop: Annotated[float, Meta(ge=0, le=1)] = 0.05
    alpha: Annotated[float, Meta(gt=0, lt=1)] = 0.05
    max_no_verdict: Annotated[float, Meta(ge=0, le=1)] = 0.2
    max_failed: Annotated[float, Meta(ge=0, le=1)] = 0.1
    fail_fast: bool = True
    results: str = "results"
    agent_version_url: str = ""
    agent_version_path: str = ""
    expect_agent_version: str = ""
    agent_version_wait: Annotated[float, Meta(ge=0)] = 600.0
    max_turns: Annotated[int, Meta(ge=1, le=200)] = 8
    turn_timeout: Annotated[float, Meta(gt=0)] = 120.0
    patience: Annotated[float, Meta(ge=0)] = 300.0
    model_rpm: Annotated[int, Meta(ge=0)] = 0
    agent_rpm: Annotated[int, Meta(ge=0)] = 0
    shard: str = ""
    baseline: str = "auto"
    baseline_branch: str = ""
    artifact_name: str = ""
    retention_days: Annotated[int, Meta(ge=0)] = 0
    comment: bool = True
    comment_key: str = ""
    comment_when: Literal["always", "changed", "failed"] = "always"
    merge: bool = False
    github_token: str = ""
    dry_run: bool = False
    demo: bool = False

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{field.name}={'***' if field.encode_name in SECRETS else repr(getattr(self, field.name))}"
            for field in msgspec.structs.fields(self)
        )
        return f"Settings({shown})"

    def matching(self) -> Matching:
        """The `match` setting as globs."""
        return Matching(tuple(self.match.split(",")))


SETTINGS_TYPE = msgspec.inspect.type_info(Settings)
"""Settings' fields as msgspec sees them (types, constraints), read once."""


class Setting(msgspec.Struct, frozen=True):
    """One setting, by its hyphenated name, with its names in each source."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in DESCRIPTIONS:
            raise ValueError(f"`{self.name}` is not a setting")

    @property
    def field(self) -> msgspec.inspect.Field:
        """Its field in Settings: type, constraints, default."""
        match SETTINGS_TYPE:
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
        return DESCRIPTIONS[self.name]

    @property
    def secret(self) -> bool:
        return self.name in SECRETS

    @property
    def switch(self) -> bool:
        """Whether it is true or false (`--dry-run` alone means true)."""
        match self.field.type:
            case msgspec.inspect.BoolType():
                return True
            case _:
                return False

    def expects(self) -> str:
        """What a value must be, without any value read: `a number from 0 to 1`."""
        match self.field.type:
            case msgspec.inspect.BoolType():
                return "true or false"
            case msgspec.inspect.LiteralType(values=values):
                return "one of " + ", ".join(str(value) for value in values)
            case msgspec.inspect.IntType(ge=ge, gt=gt, le=le, lt=lt):
                return Bounds(ge, gt, le, lt).phrase("a whole number")
            case msgspec.inspect.FloatType(ge=ge, gt=gt, le=le, lt=lt):
                return Bounds(ge, gt, le, lt).phrase("a number")
            case msgspec.inspect.LiteralType(values=values):
                return "one of " + ", ".join(str(value) for value in values)
            case _:
                return "text"

    def check(self, value: object, where: str) -> None:
        """ConfigurationError at `where` when the value does not fit the setting (the value not shown)."""
        try:
            msgspec.convert({self.name: value}, Settings, strict=False)
        except msgspec.ValidationError:
            raise ConfigurationError(where, f"must be {self.expects()}") from None


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


class Given(msgspec.Struct, frozen=True):
    """A setting's value as one source gave it, and where that is: `max-drop (INPUT_MAX-DROP)`,
    `pyproject.toml [tool.convy] max-drop`."""

    setting: Setting
    value: object
    where: str


class Tool(msgspec.Struct, frozen=True):
    """The `[tool]` table of pyproject.toml, as far as convy reads it."""

    convy: dict[str, object] = msgspec.field(default_factory=dict)


class Pyproject(msgspec.Struct, frozen=True):
    """pyproject.toml, as far as convy reads it: `[tool.convy]`."""

    tool: Tool = msgspec.field(default_factory=Tool)


class Sources(msgspec.Struct, frozen=True):
    """Where settings come from, highest first: `flags` (hyphenated names, only those given on the
    command line), the runner's inputs (`INPUT_*` in `environ`), `CONVY_*` (in `environ`), `[tool.convy]`
    of `<project>/pyproject.toml`, then the defaults. `folder` is the folder `project` is relative to
    (the current one). An empty `INPUT_*` or `CONVY_*` counts as not given (the runner passes `""` for an
    input not set); their values are read without surrounding whitespace, as the runner's toolkit does.
    Unknown `INPUT_*`/`CONVY_*` variables are ignored (a project may use `CONVY_` for its own variables);
    an unknown key in `[tool.convy]` is an error."""

    flags: Mapping[str, object]
    environ: Mapping[str, str]
    folder: Path

    def settings(self) -> Settings:
        """Every setting's value; ConfigurationError naming the setting and its source for a bad one."""
        given = self.given()
        for value in given.values():
            value.setting.check(value.value, value.where)
        return msgspec.convert({name: value.value for name, value in given.items()}, Settings, strict=False)

    def models(self) -> tuple[str, ...]:
        """Where each setting that defines the models (model-url, model-key, user-model, judge-model)
        was given, from whichever source: `model-url (CONVY_MODEL_URL)`. Empty when none was given;
        a project with models.py and any of these is exit 2, naming both."""
        given = self.given()
        return tuple(given[name].where for name in MODELS if name in given)

    def given(self) -> dict[str, Given]:
        """The value of each setting given by some source, from the highest source that gives it."""
        upper = self.commanded()
        project = upper["project"].value if "project" in upper else "."
        return {**self.pyproject(Path(str(project))), **upper}

    def commanded(self) -> dict[str, Given]:
        """The settings given by flags and the environment (all but [tool.convy]), highest winning."""
        given: dict[str, Given] = {}
        for name in DESCRIPTIONS:
            setting = Setting(name)
            variable = self.environ.get(setting.variable, "").strip()
            if variable:
                given[name] = Given(setting, variable, f"{name} ({setting.variable})")
            for key in reversed(setting.inputs):
                entered = self.environ.get(key, "").strip()
                if entered:
                    given[name] = Given(setting, entered, f"{name} ({key})")
        for name, value in self.flags.items():
            if name not in DESCRIPTIONS:
                raise ConfigurationError(f"--{name}", "is not a setting")
            given[name] = Given(Setting(name), value, f"{name} (--{name})")
        return given

    def pyproject(self, project: Path) -> dict[str, Given]:
        """The settings of `[tool.convy]` in the project's pyproject.toml (none without the file)."""
        path = self.folder / project / "pyproject.toml"
        file = (project / "pyproject.toml").as_posix()
        try:
            content = path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as error:
            raise ConfigurationError(file, f"cannot be read: {error.strerror}") from None
        try:
            table = msgspec.toml.decode(content, type=Pyproject).tool.convy
        except msgspec.ValidationError:
            raise ConfigurationError(f"{file} [tool.convy]", "must be a table of settings") from None
        except msgspec.DecodeError as error:
            raise ConfigurationError(file, f"is not valid TOML: {error}") from None
        given: dict[str, Given] = {}
        for name, value in table.items():
            where = f"{file} [tool.convy] {name}"
            if name not in DESCRIPTIONS:
                raise ConfigurationError(
                    where, "is not a setting (keys are the hyphenated names: max-drop, model-url, ...)"
                )
            if name in SECRETS:
                raise ConfigurationError(
                    where,
                    "is a secret and does not belong in a file of the repository:"
                    f" set {Setting(name).variable} or the action's input instead",
                )
            if name == "project":
                raise ConfigurationError(where, "cannot be set here: it says where this file is")
            given[name] = Given(Setting(name), value, where)
        return given


class Flags(msgspec.Struct, frozen=True):
    """The command-line flags of some settings (default: all), one `--<name>` each; a true/false
    setting's flag alone means true (`--dry-run`), or takes a value (`--comment=false`)."""

    names: tuple[str, ...] = ENGINE + ACTION

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        """Adds the flags to `parser`; a flag not given leaves no attribute on the parsed namespace."""
        for name in self.names:
            setting = Setting(name)
            match setting.field.default:
                case bool(default):
                    shown = f" (default: {str(default).lower()})"
                case float(default):
                    shown = f" (default: {default:g})"
                case default:
                    shown = f" (default: {default})" if str(default) else ""
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
            name: getattr(namespace, Setting(name).attribute)
            for name in self.names
            if hasattr(namespace, Setting(name).attribute)
        }
