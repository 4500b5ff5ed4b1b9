"""A verdict a team can trust on its first real run (docs/gate.md): the gate's order with max-failed,
exact arithmetic for the drop, the drop over exactly the scenarios the test uses, and the statuses
regressed / lower / improved / higher / not played — over synthetic runs and end to end against the
real local servers."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from convy.compare.comparison import Compared, NoBaseline
from convy.compare.gate import Gate
from convy.compare.summary import Summary, Summed
from convy.errors import ConfigurationError
from convy.play.bench import FailFast
from convy.play.outcome import ClaimResult, Failed, NoVerdict, Outcome, Turn, Verdict
from convy.store.runfile import Provenance, RunFile, RunSpec, ScenarioEntry
from tests.support.command import convy, lines, only_run
from tests.support.trusted import HELLO, decided

Attempt = bool | None | str
"""It held or not (a verdict), None (no verdict), or the reason the agent failed."""


def outcome(scenario: str, index: int, held: Attempt) -> Outcome:
    decision: Verdict | Failed | NoVerdict
    match held:
        case None:
            decision = NoVerdict(reason="judge_failure", detail="judge: HTTP 500", status=500, message="boom")
        case str(reason):
            decision = Failed(reason=reason, status=400, message="Invalid model name")
        case bool(holds):
            decision = Verdict(holds=holds, claims=(ClaimResult(claim="c", passed=holds, reason="because"),))
    return Outcome(
        scenario=scenario,
        index=index,
        fingerprint="f",
        turns=(Turn(user="u", agent="a", seconds=0.5),),
        seconds=1.0,
        decision=decision,
    )


def summary(results: dict[str, list[Attempt]], left_out: tuple[str, ...] = ()) -> Summary:
    spec = RunSpec(
        agent="a",
        repeat=max(len(v) for v in results.values()),
        scenarios=tuple(ScenarioEntry(name=n, fingerprint="f") for n in results),
        left_out=left_out,
    )
    outcomes = [outcome(n, i, h) for n, hs in results.items() for i, h in enumerate(hs)]
    return Summed(RunFile(format=1, spec=spec, status="finished", started="t"), "r/a/1", outcomes).summary()


def decide(now: Summary, before: Summary | NoBaseline, gate: Gate | None = None) -> tuple[str, str, str]:
    gate = gate or Gate()
    decision = gate.decision(Compared(now, before, gate.alpha).comparison())
    return decision.verdict, decision.rule, decision.cause


def test_an_agent_failing_every_attempt_fails_without_a_baseline_naming_reason_and_message() -> None:
    verdict, rule, cause = decide(summary({"s": ["http_400"] * 3}), NoBaseline())
    assert (verdict, rule) == ("fail", "max-failed")
    assert cause == "http_400 ×3 (HTTP 400): Invalid model name"


def test_the_gate_order_inconclusive_then_failed_then_floor_then_drop() -> None:
    # too many without verdict wins over the agent's failures
    assert decide(summary({"s": [None, None, "http_500", True]}), NoBaseline())[:2] == (
        "inconclusive",
        "max-no-verdict",
    )
    # nothing judged at all
    verdict, rule, cause = decide(summary({"s": [None, None]}), NoBaseline())
    assert (verdict, rule) == ("inconclusive", "no-verdicts") and cause == "judge_failure ×2 (HTTP 500): boom"
    # failed share before the floor
    assert (
        decide(summary({"s": ["timeout", True, False, False]}), NoBaseline(), Gate(min_pass_rate=0.9))[1]
        == "max-failed"
    )
    # max-failed is exact: 1 of 10 failed is not more than 0.1
    one_in_ten = summary({"s": ["timeout"] + [True] * 9})
    assert decide(one_in_ten, NoBaseline())[:2] == ("pass", "floor-only")
    assert decide(one_in_ten, NoBaseline(), Gate(max_failed=0.09))[1] == "max-failed"
    # the floor before the drop
    before = summary({f"s{i}": [True] * 6 for i in range(6)})
    worse = summary({f"s{i}": [True, False, False, True, False, False] for i in range(6)})
    assert decide(worse, before, Gate(min_pass_rate=0.5))[1] == "min-pass-rate"
    assert decide(worse, before)[:2] == ("fail", "max-drop")


def test_a_drop_of_exactly_max_drop_is_not_more_than_it() -> None:
    # 14/100 -> 9/100 over one scenario would be 0.14 - 0.09 > 0.05 in floating point
    before = summary({"s": [True] * 14 + [False] * 86})
    now = summary({"s": [True] * 9 + [False] * 91})
    comparison = Compared(now, before).comparison()
    assert 0.14 - 0.09 > 0.05 and comparison.drop is not None
    assert comparison.exact_drop() * 20 == 1  # type: ignore[operator]
    gate = Gate(max_drop=0.05, alpha=0.99)
    decision = gate.decision(comparison)
    assert (decision.verdict, decision.rule) == ("pass", "within-max-drop")
    assert Gate(max_drop=0.049, alpha=0.99).decision(comparison).rule == "max-drop"


def test_the_drop_is_over_the_scenarios_judged_in_both_runs_only() -> None:
    before = summary({"kept": [True] * 4, "unjudged-now": [False] * 4})
    now = summary({"kept": [True, True, True, False], "unjudged-now": [None] * 4})
    comparison = Compared(now, before).comparison()
    assert (comparison.common_now.judged, comparison.common_baseline.judged) == (4, 4)
    assert comparison.exact_drop() == 0.25


def test_statuses_regressed_lower_improved_higher() -> None:
    before = summary({"big": [True] * 5, "small": [True] * 3, "up": [False] * 5, "bit": [False] * 3})
    now = summary(
        {"big": [False] * 5, "small": [True, True, False], "up": [True] * 5, "bit": [True] + [False] * 2}
    )
    statuses = {s.name: s.status for s in Compared(now, before).comparison().scenarios}
    assert statuses == {"big": "regressed", "small": "lower", "up": "improved", "bit": "higher"}


def test_one_flaky_attempt_is_lower_not_a_regression_and_the_gate_passes() -> None:
    before = summary({"s": [True] * 3, "t": [True] * 3})
    now = summary({"s": [True, True, False], "t": [True] * 3})
    gate = Gate()
    comparison = Compared(now, before).comparison()
    decision = gate.decision(comparison)
    assert decision.verdict == "pass" and decision.regressions(comparison) == ()
    assert [s.name for s in decision.within_noise(comparison)] == ["s"]


def test_scenarios_left_out_by_match_are_not_played_not_removed() -> None:
    before = summary({"a": [True] * 3, "b": [True] * 3, "gone": [True] * 3})
    now = summary({"a": [True] * 3}, left_out=("b",))
    statuses = {s.name: s.status for s in Compared(now, before).comparison().scenarios}
    assert statuses == {"a": "unchanged", "b": "not played", "gone": "removed"}


def test_a_broken_agent_fails_convy_run_on_max_failed_end_to_end(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "hello.yaml").write_text(HELLO)
    with AgentServer() as agent, ModelServer(decided) as models:
        done = convy(
            "run",
            "--agent-url",
            f"{agent.url}/status/400",
            "--model-url",
            models.url,
            "--model-key",
            "sk-test-key-123",
            "--user-model",
            "m",
            "--repeat",
            "2",
            "--fail-fast",
            "false",
            cwd=tmp_path,
        )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "max-failed" in done.stdout and "http_400" in done.stdout
    folder = only_run(tmp_path / "results")
    compared = convy("compare", str(folder), str(folder), cwd=tmp_path)
    assert compared.returncode == 1 and "Decided by max-failed" in compared.stdout
    allowed = convy("compare", str(folder), str(folder), "--max-failed", "1", cwd=tmp_path)
    # with every failure allowed, a run in which nothing held still fails (docs/gate.md)
    assert allowed.returncode == 1, allowed.stdout + allowed.stderr
    assert "Decided by nothing-held" in allowed.stdout


def test_match_then_compare_shows_not_played_end_to_end(tmp_path: Path) -> None:
    assert convy("run", "--demo", cwd=tmp_path).returncode == 0
    first = only_run(tmp_path / "results")
    done = convy("run", "--demo", "--match", "order-status", "--baseline", str(first), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    second = next(p for p in (tmp_path / "results" / "support").iterdir() if p != first)
    spec = json.loads((second / "run.json").read_text())["spec"]
    assert "refund-late-order" in spec["left_out"]
    comment = (second / "comment.md").read_text()
    assert "not played" in comment and "removed" not in comment


def played(agent_url: str, models_url: str, cwd: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return convy(
        "run",
        "--agent-url",
        agent_url,
        "--model-url",
        models_url,
        "--model-key",
        "sk-test-key-123",
        "--user-model",
        "m",
        *more,
        cwd=cwd,
    )


def test_fail_fast_stops_a_run_against_a_broken_agent_and_resume_finishes_it(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "hello.yaml").write_text(HELLO)
    with AgentServer() as agent, ModelServer(decided) as models:
        done = played(f"{agent.url}/status/400", models.url, tmp_path, "--repeat", "20", "--concurrency", "1")
        folder = only_run(tmp_path / "results")
        stopped = json.loads((folder / "run.json").read_text())
        played_first = lines(folder)
        again = convy(
            "resume",
            str(folder),
            "--agent-url",
            f"{agent.url}/ok",
            "--model-url",
            models.url,
            "--model-key",
            "sk-test-key-123",
            "--user-model",
            "m",
            cwd=tmp_path,
        )
    assert done.returncode == 1, done.stdout + done.stderr
    assert stopped["status"] == "stopped" and "http_400" in stopped["reason"]
    assert stopped["reason"].startswith("the first 5 attempts to end all failed")
    assert len(played_first) == 5, "one at a time: no attempt starts after the fifth ends"
    assert "fail-fast stopped the run" in done.stdout and "max-failed" in done.stdout
    assert again.returncode == 1, again.stdout + again.stderr  # the failed ones still count
    finished = json.loads((folder / "run.json").read_text())
    assert finished["status"] == "finished" and len(lines(folder)) == 20


def test_fail_fast_off_plays_everything(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "hello.yaml").write_text(HELLO)
    with AgentServer() as agent, ModelServer(decided) as models:
        done = played(f"{agent.url}/status/500", models.url, tmp_path, "--repeat", "8", "--fail-fast=false")
    folder = only_run(tmp_path / "results")
    assert done.returncode == 1
    assert json.loads((folder / "run.json").read_text())["status"] == "finished" and len(lines(folder)) == 8


def ended(decision: Verdict | Failed | NoVerdict) -> Outcome:
    return Outcome(scenario="s", index=0, fingerprint="f", turns=(), seconds=0.0, decision=decision)


def test_fail_fast_needs_one_cause_and_nothing_held() -> None:
    same = FailFast()
    for _ in range(5):
        same.seen(ended(Failed(reason="http_502", status=502, message="Bad gateway")), 60)
    assert same.cause == "the first 5 attempts to end all failed: http_502 (HTTP 502): Bad gateway"
    mixed = FailFast()
    for status in (502, 502, 502, 502, 504):
        mixed.seen(ended(Failed(reason="http_5xx", status=status)), 60)
    assert mixed.cause == ""
    held = FailFast()
    held.seen(ended(Verdict(holds=True, claims=())), 60)
    for _ in range(4):
        held.seen(ended(Failed(reason="timeout")), 60)
    assert held.cause == ""
    few = FailFast()
    for _ in range(2):
        few.seen(ended(NoVerdict(reason="judge_unreadable", detail="judge: not JSON")), 2)
    assert few.cause == "the first 2 attempts to end all got no verdict: judge_unreadable: judge: not JSON"
    later = FailFast()
    later.seen(ended(Verdict(holds=False, claims=())), 60)
    for _ in range(10):
        later.seen(ended(Failed(reason="timeout")), 60)
    assert later.cause == "", "only the first 5 to end count"


def test_checked_before_any_request(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "hello.yaml").write_text(HELLO)
    with AgentServer() as agent, ModelServer(decided) as models:
        pasted = played(
            f"{agent.url}/ok",
            models.url,
            tmp_path,
            "--agent-headers",
            '{"Authorization": "Bearer sk-abcdef123"}',
        )
        spaced = played(f"{agent.url}/ok", models.url, tmp_path, "--agent-headers", "X Api Key: sk-abcdef123")
        ftp = played("ftp://example.com/chat", models.url, tmp_path)
        keyless = convy("run", "--agent-url", f"{agent.url}/ok", "--user-model", "m", cwd=tmp_path)
        (tmp_path / "agents").mkdir()
        (tmp_path / "agents" / "bot.yaml").write_text(
            f"url: {agent.url}/ok\nheaders:\n  Accept: application/json\n  Bad Name: x\n"
        )
        filed = convy(
            "run",
            "--model-url",
            models.url,
            "--model-key",
            "sk-test-key-123",
            "--user-model",
            "m",
            cwd=tmp_path,
        )
        asked = len(agent.requests) + len(models.requests)
    assert pasted.returncode == 2 and "agent-headers: looks like JSON" in pasted.stderr
    assert (
        spaced.returncode == 2
        and "agent-headers: line 1: a header name is not an HTTP token" in spaced.stderr
    )
    assert ftp.returncode == 2 and "agent-url" in ftp.stderr and "http://" in ftp.stderr
    assert keyless.returncode == 2 and "model-key: is empty while model-url is the default" in keyless.stderr
    assert filed.returncode == 2 and "agents/bot.yaml:4: a header name is not an HTTP token" in filed.stderr
    assert asked == 0
    for done in (pasted, spaced):
        assert "sk-abcdef123" not in done.stdout + done.stderr


class Deploy:
    """A version endpoint that reports the old build for `rolling` requests, then the new one."""

    def __init__(self, rolling: int) -> None:
        self.rolling = rolling
        self.asked: list[dict[str, str]] = []

    def route(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        self.asked.append(headers)
        if path == "/missing":
            return 404, {"Content-Type": "text/plain"}, b"no"
        build = "abc123" if len(self.asked) > self.rolling else "old999"
        if path == "/json":
            return 200, {"Content-Type": "application/json"}, json.dumps({"build": {"sha": build}}).encode()
        return 200, {"Content-Type": "text/plain"}, f"  build {build}\n".encode()


def test_the_version_is_polled_every_ten_seconds_on_a_controllable_clock() -> None:
    import asyncio

    from convy.demo.localserver import LocalServer
    from convy.fakes import FakeClock
    from convy.play.version import AgentVersion

    deploy = Deploy(rolling=3)
    clock = FakeClock()
    with LocalServer(deploy.route) as server:
        version = AgentVersion(
            url=f"{server.url}/json", path="build.sha", expect="abc", wait=600, headers={"X-Key": "k"}
        )
        build = asyncio.run(version.build(clock))
        plain = asyncio.run(AgentVersion(url=f"{server.url}/text").build(FakeClock()))
        late = Deploy(rolling=1000)
        with LocalServer(late.route) as slow:
            never = AgentVersion(url=f"{slow.url}/text", expect="abc", wait=60)
            waited = FakeClock()
            with pytest.raises(
                ConfigurationError, match="expect-agent-version.*within agent-version-wait 60 s"
            ):
                asyncio.run(never.build(waited))
        with pytest.raises(ConfigurationError, match="agent-version-url.*HTTP 404"):
            asyncio.run(AgentVersion(url=f"{server.url}/missing").build(FakeClock()))
    assert build == "abc123" and clock.slept == [10.0] * 3
    assert deploy.asked[0].get("x-key") == "k", "the agent's headers go with the request"
    assert plain == "build abc123"
    assert waited.slept == [10.0] * 6 and len(late.asked) == 7


def test_the_version_is_recorded_and_a_build_never_seen_is_exit_2_before_playing(tmp_path: Path) -> None:
    from convy.demo.localserver import LocalServer
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "hello.yaml").write_text(HELLO)
    deploy = Deploy(rolling=0)
    with AgentServer() as agent, ModelServer(decided) as models, LocalServer(deploy.route) as version:
        done = played(
            f"{agent.url}/ok",
            models.url,
            tmp_path,
            "--repeat",
            "1",
            "--agent-version-url",
            f"{version.url}/json",
            "--agent-version-path",
            "build.sha",
            "--expect-agent-version",
            "abc",
        )
        waited = played(
            f"{agent.url}/ok",
            models.url,
            tmp_path,
            "--repeat",
            "1",
            "--agent-version-url",
            f"{version.url}/text",
            "--expect-agent-version",
            "fffff",
            "--agent-version-wait",
            "5",
            "--results",
            "other",
        )
        agent_requests = len(agent.requests)
    assert done.returncode == 0, done.stdout + done.stderr
    folder = only_run(tmp_path / "results")
    assert json.loads((folder / "run.json").read_text())["agent_version"] == "abc123"
    assert "abc123" in (folder / "comment.md").read_text()
    assert waited.returncode == 2 and "expect-agent-version" in waited.stderr
    assert not (tmp_path / "other").exists() or not list((tmp_path / "other").rglob("attempts.jsonl"))
    assert agent_requests == 1, "only the first run played"


def built(version: str, sha: str) -> Summary:
    spec = RunSpec(
        agent="a",
        repeat=1,
        scenarios=(ScenarioEntry(name="s", fingerprint="f"),),
        provenance=Provenance(sha=sha),
    )
    file = RunFile(format=1, spec=spec, status="finished", started="t", agent_version=version)
    return Summed(file, "r/a/1", [outcome("s", 0, True)]).summary()


def test_the_build_is_shown_beside_the_baseline_s_and_the_same_build_for_two_commits_warns() -> None:
    from convy.draw.markdown import CommentMarkdown

    def shown(now: Summary, before: Summary) -> str:
        comparison = Compared(now, before).comparison()
        return CommentMarkdown(comparison, Gate().decision(comparison)).text()

    same = shown(built("build 41", "b" * 40), built("build 41", "a" * 40))
    assert re.search(r"\| agent build +\| build 41 +\| build 41 +\|", same)
    assert "Both runs report agent build build 41 but were made for different commits (bbbbbbb now" in same
    moved = shown(built("build 42", "b" * 40), built("build 41", "a" * 40))
    assert (
        re.search(r"\| agent build +\| build 42 +\| build 41 +\|", moved) and "Both runs report" not in moved
    )


def test_attribution_counts_each_party_with_its_commonest_message() -> None:
    decisions: list[Verdict | Failed | NoVerdict] = [
        Verdict(holds=False, claims=(ClaimResult(claim="c", passed=False, reason="it refused"),)),
        Failed(reason="http_500", status=500, message="upstream down"),
        NoVerdict(reason="model_failure", detail="user: HTTP 401 from the model"),
        NoVerdict(reason="model_failure", detail="judge: not JSON"),
        NoVerdict(reason="context_exceeded", detail="judge: too long", message="maximum context length"),
        NoVerdict(reason="user_timeout", message="timed out after 120 s"),
        NoVerdict(reason="judge_unreadable", raw="{oops"),
        NoVerdict(reason="agent_busy", status=429),
        NoVerdict(reason="model_busy", status=429),
        Verdict(holds=True, claims=()),
    ]
    spec = RunSpec(agent="a", repeat=len(decisions), scenarios=(ScenarioEntry(name="s", fingerprint="f"),))
    outcomes = [
        Outcome(scenario="s", index=i, fingerprint="f", turns=(), seconds=0.0, decision=d)
        for i, d in enumerate(decisions)
    ]
    now = Summed(RunFile(format=1, spec=spec, status="finished", started="t"), "r/a/1", outcomes).summary()
    parties = {p.party: (p.count, p.reason, p.message) for p in now.parties}
    assert parties == {
        "agent": (2, "claims_failed", "it refused"),
        "user model": (2, "model_failure", "HTTP 401 from the model"),
        "judge": (3, "model_failure", "not JSON"),
        "busy": (2, "agent_busy", ""),
    }
    assert [p.party for p in now.parties] == ["agent", "user model", "judge", "busy"]


def test_a_drop_made_of_lower_scenarios_fails_and_lists_them_as_regressions_with_errors(
    tmp_path: Path,
) -> None:
    from convy.draw.markdown import CommentMarkdown
    from convy_action.runner.outputs import Annotations

    names = [f"s{i}" for i in range(6)]
    before = summary({n: [True] * 3 for n in names})
    now = summary({n: [True, False, False] for n in names})
    comparison = Compared(now, before).comparison()
    decision = Gate().decision(comparison)
    assert (decision.verdict, decision.rule) == ("fail", "max-drop")
    assert {s.status for s in comparison.scenarios} == {"lower"}
    assert [s.name for s in decision.regressions(comparison)] == names and decision.within_noise(
        comparison
    ) == ()
    text = CommentMarkdown(comparison, decision).text()
    assert "### What failed (6)" in text and "Lower than the baseline" not in text
    kinds = [c.name for c in Annotations(comparison, decision, tmp_path, tmp_path).commands()]
    assert kinds == ["error"] * 6
    passed = Gate(max_drop=0.9).decision(comparison)
    kinds = [c.name for c in Annotations(comparison, passed, tmp_path, tmp_path).commands()]
    assert passed.verdict == "pass" and kinds == ["notice"] * 6


def test_a_wrong_model_key_is_inconclusive_with_the_provider_s_words(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import Canned, ModelServer

    def refused(request: dict[str, object]) -> Canned:
        return Canned(401, {"error": {"message": "Incorrect API key provided: sk-wron*****", "type": "auth"}})

    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "hello.yaml").write_text("user: Say hello.\nclaims: [The agent answers.]\n")
    with AgentServer() as agent, ModelServer(refused) as models:
        done = played(f"{agent.url}/ok", models.url, tmp_path, "--repeat", "10", "--concurrency", "1")
    assert done.returncode == 3, done.stdout + done.stderr
    comment = (only_run(tmp_path / "results") / "comment.md").read_text()
    assert "## ⚠️ convy: inconclusive" in comment and "No claim failed" not in comment
    assert "Incorrect API key provided" in comment and re.search(
        r"\| the user model |- \*\*the user model\*\*", comment
    )
    assert "Incorrect API key provided" in done.stdout


def test_fail_fast_lets_only_the_conversations_in_flight_finish(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "hello.yaml").write_text(HELLO)
    with AgentServer() as agent, ModelServer(decided) as models:
        done = played(f"{agent.url}/status/502", models.url, tmp_path, "--repeat", "60", "--concurrency", "4")
        asked = len(agent.requests)
    folder = only_run(tmp_path / "results")
    assert done.returncode == 1 and json.loads((folder / "run.json").read_text())["status"] == "stopped"
    assert 5 <= len(lines(folder)) <= 5 + 3 and asked == len(lines(folder))
