"""One attempt finds a setup mistake (docs/gate.md): the run's first agent request goes alone, so a
closed port, a 404 or a 401 plays one attempt however wide the concurrency, and `fail-fast: false`
turns off every early stop, the setup-mistake stop included. A wrong answer path names the setting
to check, lists the answer's top-level keys, says "did you mean …?" where a path is close, and the
attempt line keeps the answer (masked) as `raw`. A tab in YAML says so."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from convy.demo.localserver import LocalServer
from convy.play.bench import FailFast
from convy.play.outcome import Failed, Outcome, Turn
from convy.play.wire.reading import MissingAnswer
from tests.servers.agents import AgentServer
from tests.support.command import convy, lines, only_run
from tests.support.setup_project import closed_port, project

Triple = tuple[int, dict[str, str], bytes]

WIDE = ("--concurrency", "8", "--repeat", "4")
"""3 scenarios × 4 = 12 attempts, 8 at a time."""


def reasons(folder: Path) -> list[str]:
    return [str(line["decision"]["reason"]) for line in lines(folder)]  # type: ignore[index]


def test_a_closed_port_plays_one_attempt_at_concurrency_8(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    wrong = f"http://127.0.0.1:{closed_port()}/chat"
    done = convy("run", "--agent-url", wrong, *WIDE, cwd=root)
    assert done.returncode == 1, done.stdout + done.stderr
    folder = only_run(root / "results")
    assert reasons(folder) == ["not_delivered"], "one attempt, not one per concurrency place"
    assert json.loads((folder / "run.json").read_text())["status"] == "stopped"
    assert "check agent-url" in done.stdout and wrong in done.stdout


def test_a_404_and_a_401_each_play_one_attempt_and_one_request_at_concurrency_8(tmp_path: Path) -> None:
    for route, setting in (("no-such-route", "check agent-url"), ("status/401", "check agent-headers")):
        root = project(tmp_path / route.replace("/", "-"))
        with AgentServer() as agent:
            done = convy("run", "--agent-url", f"{agent.url}/{route}", *WIDE, cwd=root)
            asked = len(agent.requests)
        assert done.returncode == 1, done.stdout + done.stderr
        assert asked == 1, f"{route}: the first request went alone and stopped the run"
        assert reasons(only_run(root / "results")) == ["not_delivered"], route
        assert setting in done.stdout, route


def test_fail_fast_false_plays_every_attempt_against_a_dead_agent(tmp_path: Path) -> None:
    root = project(tmp_path / "closed")
    done = convy(
        "run", "--agent-url", f"http://127.0.0.1:{closed_port()}/chat", *WIDE, "--fail-fast=false", cwd=root
    )
    folder = only_run(root / "results")
    assert done.returncode == 1, done.stdout + done.stderr
    assert reasons(folder) == ["not_delivered"] * 12
    assert json.loads((folder / "run.json").read_text())["status"] == "finished"
    root = project(tmp_path / "404")
    with AgentServer() as agent:
        done = convy("run", "--agent-url", f"{agent.url}/nope", *WIDE, "--fail-fast", "false", cwd=root)
        asked = len(agent.requests)
    assert done.returncode == 1 and asked == 12, done.stdout + done.stderr
    assert json.loads((only_run(root / "results") / "run.json").read_text())["status"] == "finished"


def test_a_working_agent_plays_every_attempt(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    with AgentServer() as agent:
        done = convy("run", "--agent-url", f"{agent.url}/ok", *WIDE, cwd=root)
        asked = len(agent.requests)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(lines(only_run(root / "results"))) == 12 and asked == 12


def ended() -> Outcome:
    failed = Failed(reason="http_500", status=500)
    return Outcome(scenario="s", index=0, fingerprint="f", turns=(), seconds=0.0, decision=failed)


def test_the_first_attempt_goes_alone_until_an_answer_came_back_or_it_ended() -> None:
    async def scenario(release: str) -> list[str]:
        halt = FailFast()
        said: list[str] = []

        async def attempt(name: str) -> None:
            await halt.admit()
            said.append(name)

        await attempt("first")
        others = [asyncio.create_task(attempt(name)) for name in ("second", "third")]
        await asyncio.sleep(0)
        assert said == ["first"], "the others wait for the first request's answer"
        if release == "answered":
            halt.answered()
        else:
            halt.seen(ended(), 3)
        await asyncio.gather(*others)
        return said

    assert asyncio.run(scenario("answered")) == ["first", "second", "third"]
    assert asyncio.run(scenario("ended")) == ["first", "second", "third"]


def test_fail_fast_off_never_stops_even_on_a_setup_mistake() -> None:
    undelivered = Failed(reason="not_delivered", detail="connection: no connection to http://x/chat")
    mistake = Outcome(scenario="s", index=0, fingerprint="f", turns=(), seconds=0.0, decision=undelivered)
    off = FailFast(0, mistakes=False)
    for _ in range(8):
        off.seen(mistake, 8)
    assert off.cause == ""
    on = FailFast(0)
    on.seen(mistake, 8)
    assert on.cause.startswith("the agent was not reached; check agent-url")


def test_a_wrong_answer_path_names_the_setting_lists_the_keys_and_keeps_the_answer_masked(
    tmp_path: Path,
) -> None:
    def answered(method: str, path: str, headers: dict[str, str], body: bytes) -> Triple:
        sent = next((value for name, value in headers.items() if name.lower() == "authorization"), "")
        said = {"reply": {"text": "hello"}, "usage": {"tokens": 3}, "debug": {"authorization": sent}}
        return 200, {"Content-Type": "application/json"}, json.dumps(said).encode()

    root = project(tmp_path / "p")
    secret = "Bearer sk-agent-secret-0000"
    with LocalServer(answered) as server:
        done = convy(
            "run",
            "--agent-url",
            f"{server.url}/chat",
            "--agent-body",
            '{"messages": "$messages"}',
            "--agent-answer",
            "reply.message",
            "--agent-headers",
            f"Authorization: {secret}",
            "--concurrency",
            "1",
            "--repeat",
            "1",
            cwd=root,
        )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "check agent-answer" in done.stdout
    assert "its top-level keys are `reply`, `usage`, `debug`" in done.stdout
    assert "did you mean `reply.text`?" in done.stdout
    [line, *_] = lines(only_run(root / "results"))
    decision = line["decision"]
    assert isinstance(decision, dict) and decision["reason"] == "bad_answer"
    raw = str(decision["raw"])
    assert raw.startswith('{"reply": {"text": "hello"}') and "***" in raw
    assert "sk-agent-secret-0000" not in raw + done.stdout + done.stderr


def test_a_wrong_answer_path_plays_one_attempt_at_concurrency_8(tmp_path: Path) -> None:
    """Every attempt would fail the same way: the run stops at the first, as at a 404."""
    asked: list[str] = []

    def answered(method: str, path: str, headers: dict[str, str], body: bytes) -> Triple:
        asked.append(path)
        return 200, {"Content-Type": "application/json"}, json.dumps({"reply": {"text": "hi"}}).encode()

    root = project(tmp_path / "p")
    with LocalServer(answered) as server:
        done = convy(
            "run", "--agent-url", f"{server.url}/chat", "--agent-answer", "reply.message", *WIDE, cwd=root
        )
    assert done.returncode == 1, done.stdout + done.stderr
    folder = only_run(root / "results")
    assert reasons(folder) == ["bad_answer"] and len(asked) == 1, "one attempt, one request"
    assert json.loads((folder / "run.json").read_text())["status"] == "stopped"
    assert "fail-fast stopped the run: the agent's answer was not found" in done.stdout
    assert "check agent-answer" in done.stdout


def test_an_answer_path_that_finds_nothing_only_later_does_not_stop_the_run() -> None:
    """Once an attempt reached the agent's logic, a missing answer is the agent's own failure."""
    halt = FailFast()
    held = Turn(user="hi", agent="hello", seconds=0.1)
    answered = Failed(reason="bad_answer", detail="the answer from http://x/chat has nothing at `a`")
    halt.seen(
        Outcome(scenario="s", index=0, fingerprint="f", turns=(held,), seconds=0.1, decision=answered), 12
    )
    missing = Outcome(scenario="s", index=1, fingerprint="f", turns=(), seconds=0.0, decision=answered)
    halt.seen(missing, 12)
    assert halt.cause == ""


def test_a_wrong_path_in_an_agent_file_names_the_file_s_answer(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    with AgentServer() as agent:
        (root / "agents").mkdir()
        (root / "agents" / "bot.yaml").write_text(f"url: {agent.url}/ok\nanswer: choices.0.message.text\n")
        done = convy("run", "--concurrency", "1", "--repeat", "1", cwd=root)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "check the agent file's `answer` (agents/bot.yaml)" in done.stdout
    assert "did you mean `choices.0.message.content`?" in done.stdout


def test_an_answer_s_keys_are_at_most_ten_and_a_far_path_suggests_nothing() -> None:
    many = {f"key{n}": "x" for n in range(14)}
    text = MissingAnswer("zzz.qqq", many, "agent-answer", "http://a/chat").text()
    assert "`key9`, 4 more" in text and "`key10`" not in text and "did you mean" not in text
    nested = {"data": {"outputs": [{"text": "hi"}]}, "stats": {"in": 1}}
    assert MissingAnswer("data.outputs.0.content", nested, "s", "u").close() == "data.outputs.0.text"
    assert MissingAnswer("text", {"reply": {"text": "hi"}}, "s", "u").close() == "reply.text"
    assert MissingAnswer("answer", {"reply": {"text": "hi"}, "other": "x"}, "s", "u").close() == ""
    assert "it is a list of 2, not an object" in MissingAnswer("a", [1, 2], "s", "u").text()


def test_a_tab_in_yaml_says_so_with_file_and_line(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    (root / "scenarios" / "s1.yaml").write_text("name: s1\nturns:\n\t- hello\nchecks: [{contains: echo}]\n")
    done = convy("run", "--agent-url", "http://127.0.0.1:9/chat", cwd=root)
    assert done.returncode == 2
    assert "scenarios/s1.yaml:3: a tab character (YAML indents with spaces)" in done.stderr
    (root / "scenarios" / "s1.yaml").write_text("name: s1\nturns: [hello]\nchecks: [{contains: echo}]\n")
    (root / "agents").mkdir()
    (root / "agents" / "bot.yaml").write_text("url: http://127.0.0.1:9/chat\nheaders:\n\tX-Key: y\n")
    done = convy("run", cwd=root)
    assert done.returncode == 2
    assert "agents/bot.yaml:3: a tab character (YAML indents with spaces)" in done.stderr
