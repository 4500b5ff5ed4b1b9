"""The engine's settings by name: what each one means (the flags' help, and action.yml's inputs
through the action), their order, which are secret, and which define the models. A program built
on the engine (the action) extends them with its own."""

from __future__ import annotations

# What each setting means, in the order of Settings: the flags' help and action.yml's descriptions.
SETTING_DESCRIPTIONS: dict[str, str] = {
    "project": "the user's project folder",
    "scenarios": "folder or glob of scenario files, relative to the project",
    "match": "comma-separated globs over scenario names and tags (default: every scenario)",
    "agent": "which agent to play (default: the only one, or `agent` for agent-url)",
    "agent-url": "a declarative agent without files: its full endpoint URL",
    "agent-body": (
        "the declarative agent's JSON body template ($messages, $message, $message_id, $turn, "
        "$conversation, $session; inside strings too, $$ for a literal $)"
    ),
    "agent-answer": "the dotted path of the answer in the declarative agent's response JSON",
    "agent-headers": "the declarative agent's request headers, one `Name: value` per line (secret)",
    "agent-protocol": (
        "what the declarative agent speaks: `openai-chat`, `openai-responses`, `a2a`, `ag-ui`, "
        "`vercel-ai` or `template` "
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
    "judge-votes": (
        "judge calls per claim: `1` (default), an odd number (the majority decides), or `failing` (one, "
        "and two more where a claim fails)"
    ),
    "vote-temperature": "the temperature of each judge's calls after its first (judge-votes)",
    "judge-panel": (
        "further judges that vote with the judge, as JSON or YAML flow text: `[{model, url, key}]`, "
        "`key` naming the environment variable that holds the member's API key"
    ),
    "model-timeout": "seconds a model may take to answer one request (apart from turn-timeout, the agent's)",
    "repeat": "attempts per scenario",
    "max-repeat": (
        "with a baseline, play by stages: 1 attempt of each scenario, up to `repeat` where the runs do not "
        "all agree, up to this many where still unclear (default: `repeat`, which turns it off)"
    ),
    "rejudge": (
        "with a baseline, re-judge its dialogues of scenarios whose claims or checks changed (or all, "
        "when the judge model changed), so they are still compared"
    ),
    "replay": (
        "`none` (default) or `user`: with a baseline, replay its simulated user's messages while the agent "
        "answers as it did there, and ask the user model only from the first different answer"
    ),
    "concurrency": "conversations at once",
    "min-pass-rate": "absolute floor of the pass rate (0..1); 0 turns it off",
    "max-drop": "largest allowed drop of the pass rate versus the baseline (0..1)",
    "alpha": "a drop counts only when significant at this level (between 0 and 1)",
    "max-no-verdict": "above this share of attempts without verdict the run is inconclusive (0..1)",
    "max-failed": "above this share of attempts the agent failed (HTTP errors, timeouts) the gate fails",
    "min-judge-kappa": (
        "the run is inconclusive when the judge's Cohen's kappa against at least min-labels labelled "
        "decisions is under this (0.4, the default, is where moderate agreement begins); a value you "
        "set also makes fewer labels, or labels all one way, inconclusive; 0 turns it off"
    ),
    "min-labels": (
        "labelled decisions (chosen at random) needed to trust the judge (min-judge-kappa) and to "
        "show the pass rate corrected for the judge"
    ),
    "labels": (
        "the folder of label files (labels/*.yaml) every run calibrates the judge on, relative to "
        "the project; used when it exists, `none` turns it off"
    ),
    "fail-fast": "stop starting attempts when the first 5 to end all failed or got no verdict for one cause",
    "budget": (
        "most USD the run may spend on its models: no attempt starts once the cost so far plus an "
        "attempt's median would pass it; 0 is no budget"
    ),
    "prices": (
        "model prices over the price library's, as JSON text: "
        '`{"gpt-4o-mini": {"input": 0.15, "output": 0.60}}` (USD per million tokens)'
    ),
    "results": "where run folders go, relative to the project",
    "junit": (
        "write the run as a JUnit XML file here (relative to the working folder), one test case per "
        "scenario, for a CI test reporter; empty writes none"
    ),
    "agent-version-url": "a URL (GET, with the agent's headers) whose answer names the agent's build",
    "agent-version-path": "the dotted path of the build in agent-version-url's JSON answer",
    "expect-agent-version": "wait until the agent's build contains this text (e.g. the PR's head SHA)",
    "agent-version-wait": "seconds to wait for expect-agent-version before exit 2",
    "max-turns": "most agent answers in one attempt; a scenario's own max_turns wins",
    "turn-timeout": "seconds for opening a conversation, each turn, and closing it",
    "patience": "seconds a participant waits for a busy service (429/503)",
    "model-rpm": "requests per minute to the models; 0 is no limit",
    "agent-rpm": "requests per minute to the agent; 0 is no limit",
    "trace-context": (
        "send a W3C `traceparent` header with every agent request (a trace per attempt, recorded in "
        "attempts.jsonl as trace_id) so a traced agent continues it"
    ),
    "trace-url": (
        "a link to each attempt's trace in your tracing tool: a URL with `{trace_id}` and/or "
        "`{conversation}`, e.g. https://cloud.langfuse.com/project/<id>/traces/{trace_id}"
    ),
    "shard": (
        "play one slice of the scenarios, `k/n` (1-based): scenario i (0-based, in declaration order) "
        "belongs to shard (i mod n) + 1"
    ),
}
# The engine's settings, in the order of Settings.
SETTING_NAMES: tuple[str, ...] = (
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
    "judge-votes",
    "vote-temperature",
    "judge-panel",
    "model-timeout",
    "repeat",
    "max-repeat",
    "rejudge",
    "replay",
    "concurrency",
    "min-pass-rate",
    "max-drop",
    "alpha",
    "max-no-verdict",
    "max-failed",
    "min-judge-kappa",
    "min-labels",
    "labels",
    "fail-fast",
    "budget",
    "prices",
    "results",
    "junit",
    "agent-version-url",
    "agent-version-path",
    "expect-agent-version",
    "agent-version-wait",
    "max-turns",
    "turn-timeout",
    "patience",
    "model-rpm",
    "agent-rpm",
    "trace-context",
    "trace-url",
    "shard",
)
# Masked in logs, never written, refused in [tool.convy] (a file in the repository).
SETTING_SECRETS: frozenset[str] = frozenset({"model-key", "judge-key", "agent-headers"})
# The settings that define the models: with a models.py as well, the project is exit 2.
MODELS: tuple[str, ...] = (
    "model-url",
    "model-key",
    "user-model",
    "judge-model",
    "judge-url",
    "judge-key",
    "judge-panel",
)
