"""Votes and a panel (docs/judge.md), end to end against the agent and model stand-ins: `judge-votes`
3 makes exactly three judge calls per attempt (the later ones at `vote-temperature`) and the
majority decides; `failing` makes one call, and two more only where a claim failed; a panel's
members are asked at their own servers with the keys their variables hold, never another's; every
vote is recorded per claim and a failing claim's split is shown; bad settings are exit 2 before any
request; and the judge's fingerprint names its votes, so a calibration with other votes is made
again."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from convy import ConfigurationError
from tests.servers.agents import AgentServer
from tests.servers.models import ModelServer
from tests.support.command import convy

ANSWERS, SINGS = "The agent answers.", "The agent sings."
Judging = Callable[[dict[str, Any]], str]


def decision(passed: bool) -> str:
    return json.dumps({"decisions": [{"pass": passed, "reason": "said" if passed else "not said"}]})


def sings(request: dict[str, Any]) -> bool:
    return SINGS in str(request["messages"][-1]["content"])


def warm(request: dict[str, Any]) -> bool:
    """A vote after the judge's first: asked at a temperature above 0."""
    return float(request.get("temperature") or 0) > 0


def project(folder: Path) -> Path:
    (folder / "scenarios").mkdir(parents=True, exist_ok=True)
    (folder / "scenarios" / "answers.yaml").write_text(f"turns: [hello]\nclaims: [{ANSWERS}]\n")
    (folder / "scenarios" / "sings.yaml").write_text(f"turns: [hello]\nclaims: [{SINGS}]\n")
    return folder


def played(
    folder: Path, agent: AgentServer, judge: ModelServer, *extra: str, env: dict[str, str] | None = None
) -> Any:
    return convy(
        "run",
        "--agent-url",
        f"{agent.url}/ok",
        "--model-url",
        judge.url,
        "--model-key",
        "sk-judge-key",
        "--judge-model",
        "judge-a",
        "--repeat",
        "1",
        "--min-pass-rate",
        "0.9",
        "--fail-fast",
        "false",
        *extra,
        cwd=folder,
        env=env,
    )


def attempts(folder: Path) -> list[dict[str, Any]]:
    (run,) = sorted((folder / "results" / "agent").iterdir())
    return [json.loads(line) for line in (run / "attempts.jsonl").read_text().splitlines() if line]


def comment(folder: Path) -> str:
    (run,) = sorted((folder / "results" / "agent").iterdir())
    return (run / "comment.md").read_text()


def test_three_votes_make_three_calls_per_attempt_and_the_majority_decides(tmp_path: Path) -> None:
    # the first call holds every claim; later ones (warm) say the agent did not sing
    folder = project(tmp_path)
    with AgentServer() as agent, ModelServer(lambda r: decision(not (sings(r) and warm(r)))) as judge:
        done = played(folder, agent, judge, "--judge-votes", "3", "--vote-temperature", "0.7")
    assert done.returncode == 1, done.stdout + done.stderr
    assert len(judge.requests) == 2 * 3, "an attempt of each scenario, three votes each"
    temperatures = sorted(float(r.get("temperature") or 0) for r in judge.requests)
    assert temperatures == [0.0] * 2 + [0.7] * 4, "each attempt's first call at 0, the later two warm"
    assert len({r["messages"][-1]["content"] for r in judge.requests if sings(r)}) == 1, "the same request"
    lines = {(a["scenario"], a["index"]): a for a in attempts(folder)}
    sang = lines[("sings", 0)]["decision"]
    assert sang["holds"] is False
    (claim,) = sang["claims"]
    assert claim["pass"] is False
    assert sorted(v["pass"] for v in claim["votes"]) == [False, False, True]
    assert {v["judge"] for v in claim["votes"]} == {"judge-a"}
    assert lines[("answers", 0)]["decision"]["holds"] is True
    assert [v["pass"] for v in lines[("answers", 0)]["decision"]["claims"][0]["votes"]] == [True] * 3
    assert "2 of 3 votes" in comment(folder)


def test_failing_votes_twice_more_only_where_a_claim_failed(tmp_path: Path) -> None:
    # the first call fails the singing claim; the two later calls hold it: 2 of 3 hold
    folder = project(tmp_path)
    with AgentServer() as agent, ModelServer(lambda r: decision(not sings(r) or warm(r))) as judge:
        done = played(folder, agent, judge, "--judge-votes", "failing")
    assert done.returncode == 0, done.stdout + done.stderr
    calls = [sings(r) for r in judge.requests]
    assert calls.count(False) == 1, "the answering scenario's attempt held at once: one call"
    assert calls.count(True) == 3, "the singing attempt failed a claim: two more calls"
    lines = {(a["scenario"], a["index"]): a for a in attempts(folder)}
    (claim,) = lines[("sings", 0)]["decision"]["claims"]
    assert claim["pass"] is True and sorted(v["pass"] for v in claim["votes"]) == [False, True, True]
    assert len(lines[("answers", 0)]["decision"]["claims"][0]["votes"]) == 1


def test_a_panel_votes_at_its_own_servers_with_its_own_keys(tmp_path: Path) -> None:
    # the judge holds every claim; both members fail the singing one: 2 of 3 fail it
    folder = project(tmp_path)
    panel_says: Judging = lambda r: decision(not sings(r))  # noqa: E731
    with (
        AgentServer() as agent,
        ModelServer(lambda r: decision(True)) as judge,
        ModelServer(panel_says) as second,
        ModelServer(panel_says) as third,
    ):
        members = (
            f'[{{model: panel-b, url: "{second.url}", key: PANEL_B_KEY}},'
            f' {{model: panel-c, url: "{third.url}", key: PANEL_C_KEY}}]'
        )
        done = played(
            folder,
            agent,
            judge,
            "--judge-panel",
            members,
            "--prices",
            "{judge-a: {input: 1, output: 1}, panel-b: {input: 1, output: 1},"
            " panel-c: {input: 5, output: 5}}",
            env={"PANEL_B_KEY": "sk-panel-b", "PANEL_C_KEY": "sk-panel-c"},
        )
    assert done.returncode == 1, done.stdout + done.stderr
    for server, key, model in (
        (judge, "sk-judge-key", "judge-a"),
        (second, "sk-panel-b", "panel-b"),
        (third, "sk-panel-c", "panel-c"),
    ):
        assert len(server.requests) == 2, "every judge votes once on every attempt"
        assert {h.get("authorization") for h in server.headers} == {f"Bearer {key}"}, "its own key only"
        assert {r["model"] for r in server.requests} == {model}
    lines = {(a["scenario"], a["index"]): a for a in attempts(folder)}
    (claim,) = lines[("sings", 0)]["decision"]["claims"]
    assert claim["pass"] is False
    assert sorted((v["judge"], v["pass"]) for v in claim["votes"]) == [
        ("judge-a", True),
        ("panel-b", False),
        ("panel-c", False),
    ]
    assert lines[("sings", 0)]["cost"]["judge"] is None, (
        "members priced apart: the judge's tokens cost unknown"
    )
    run = json.loads(next((folder / "results" / "agent").glob("*/run.json")).read_text())
    assert run["spec"]["judge_panel"] == ["panel-b", "panel-c"]
    assert "2 of 3 votes" in comment(folder)


@pytest.mark.parametrize(
    ("extra", "env", "said"),
    [
        (("--judge-votes", "2"), {}, "judge-votes"),
        (("--judge-votes", "many"), {}, "judge-votes"),
        (("--judge-panel", "[{model: b, url: 'http://127.0.0.1:9/v1', key: B_KEY}]"), {"B_KEY": "k"}, "odd"),
        (
            (
                "--judge-panel",
                "[{model: b, url: 'http://127.0.0.1:9/v1', key: B_KEY},"
                " {model: c, url: 'http://127.0.0.1:9/v1', key: C_KEY}]",
            ),
            {"B_KEY": "k"},
            "C_KEY",
        ),
        (("--judge-panel", "[{model: b}]"), {}, "judge-panel"),
        (
            ("--judge-panel", "[{model: b, url: 'ftp://x', key: B}, {model: c, url: 'http://x', key: C}]"),
            {},
            "url",
        ),
    ],
)
def test_a_bad_vote_or_panel_setting_is_exit_2_before_any_request(
    tmp_path: Path, extra: tuple[str, ...], env: dict[str, str], said: str
) -> None:
    folder = project(tmp_path)
    with AgentServer() as agent, ModelServer(lambda r: decision(True)) as judge:
        done = played(folder, agent, judge, *extra, env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr
    assert "sk-judge-key" not in done.stderr and "k\n" not in done.stderr
    assert judge.requests == [] and agent.requests == []


def test_a_panel_variable_that_is_not_set_is_named_never_a_value() -> None:
    from convy import Settings

    settings = Settings(
        judge_panel='[{"model": "b", "url": "https://b.example/v1", "key": "B_KEY"}, '
        '{"model": "c", "url": "https://c.example/v1", "key": "C_KEY"}]'
    )
    with pytest.raises(ConfigurationError, match="C_KEY") as raised:
        settings.panel().keys({"B_KEY": "secret-b"})
    assert "secret-b" not in str(raised.value)
    assert settings.panel().keys({"B_KEY": "secret-b", "C_KEY": "secret-c"}) == ("secret-b", "secret-c")
    assert settings.panel().named == ("b@https://b.example", "c@https://c.example")


LABELS = "".join(
    f"- scenario: answers\n  transcript:\n    - {{user: hello, agent: 'LABEL {n}'}}\n"
    f"  decisions:\n    {json.dumps(ANSWERS)}: true\n"
    for n in range(3)
)


def test_the_fingerprint_names_the_votes_so_a_calibration_with_other_votes_is_made_again(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path)
    (folder / "labels").mkdir()
    (folder / "labels" / "set.yaml").write_text(LABELS)

    said: list[str] = []

    def calibrate(judge: ModelServer, *extra: str) -> int:
        before = len(judge.requests)
        done = convy(
            "calibrate",
            "--model-url",
            judge.url,
            "--model-key",
            "sk-judge-key",
            "--judge-model",
            "judge-a",
            *extra,
            cwd=folder,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        said.append(done.stdout)
        return len(judge.requests) - before

    with ModelServer(lambda r: decision(True)) as judge:
        assert calibrate(judge) == 3
        assert calibrate(judge) == 0, "the same judge: every decision reused"
        assert calibrate(judge, "--judge-votes", "3") == 9, "other votes: another judge, three calls each"
        assert calibrate(judge, "--judge-votes", "3") == 0
        assert calibrate(judge, "--judge-votes", "3", "--vote-temperature", "0.5") == 9
        assert calibrate(judge, "--judge-votes", "failing") == 3, "every claim held: one call each"
    assert "1 vote," in said[0] and "3 votes (later ones at temperature 0.5)" in said[4]
    assert "1 vote, 3 where a claim fails" in said[5]
    lines = [
        json.loads(line)
        for path in sorted((folder / "results" / "calibration").glob("*/calibration.jsonl"))
        for line in path.read_text().splitlines()
    ]
    assert max(len(line["votes"][ANSWERS]) for line in lines) == 3
