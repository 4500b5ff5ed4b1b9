"""The settings only the action has, over the engine's: where the baseline comes from, the run
folder's artifact, the pull request comment, a merge job, dry runs and the OpenTelemetry export.
They are read like the engine's (one name everywhere: `comment-key` is `--comment-key`,
`INPUT_COMMENT-KEY`, `CONVY_COMMENT_KEY` and `[tool.convy] comment-key`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar, Literal

from msgspec import Meta

from convy import SETTING_DESCRIPTIONS, SETTING_NAMES, SETTING_SECRETS, Settings

OWN_DESCRIPTIONS: dict[str, str] = {
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
    "github-token": (
        "token with `actions: read` and `pull-requests: write` (secret; default: the job's `github.token`)"
    ),
    "dry-run": "play, compare and render, but upload and post nothing",
    "estimate": (
        "with dry-run: print the run's expected model calls, tokens and cost from the baseline, play nothing"
    ),
    "demo": "play the bundled example project against a built-in demo agent, without keys or network",
    "otlp-endpoint": (
        "send the run to this OpenTelemetry receiver over OTLP/HTTP after the gate, one trace per attempt "
        "(e.g. http://phoenix:6006); a failure is a warning"
    ),
    "otlp-headers": "the headers otlp-endpoint needs, one `Name: value` per line (secret)",
}
"""What each of the action's own settings means, in the order of ActionSettings' own fields."""
OWN: tuple[str, ...] = tuple(OWN_DESCRIPTIONS)
NAMES: tuple[str, ...] = SETTING_NAMES + OWN
"""Every input of the action, in the order of action.yml: the engine's settings, then its own."""


class ActionSettings(Settings, frozen=True, kw_only=True, rename="kebab", forbid_unknown_fields=True):
    """Every setting's value as the action reads it: the engine's, then the action's own."""

    descriptions: ClassVar[Mapping[str, str]] = {**SETTING_DESCRIPTIONS, **OWN_DESCRIPTIONS}
    secrets: ClassVar[frozenset[str]] = SETTING_SECRETS | {"github-token", "otlp-headers"}

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
    estimate: bool = False
    demo: bool = False
    otlp_endpoint: str = ""
    otlp_headers: str = ""
