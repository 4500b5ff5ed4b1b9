"""The first screen says why (the first hour): under a scenario that failed because the agent
failed, the console's table and the comment's "What failed" show the commonest reason and the
service's own words, before any collapsed section."""

from __future__ import annotations

import json
from pathlib import Path

from convy.demo.localserver import LocalServer
from tests.support.command import convy
from tests.support.command import only_run as one_run

Triple = tuple[int, dict[str, str], bytes]
JSON = {"Content-Type": "application/json"}


def answered(method: str, path: str, headers: dict[str, str], body: bytes) -> Triple:
    said = json.loads(body)["messages"][-1]["content"]
    if "break" in said:
        return 500, JSON, json.dumps({"error": {"message": "the orders database is down"}}).encode()
    return 200, JSON, json.dumps({"choices": [{"message": {"role": "assistant", "content": "ok"}}]}).encode()


def test_a_scenario_the_agent_failed_shows_its_reason_and_the_services_words(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    for name, said in (("breaks", "please break"), ("works", "hello")):
        (tmp_path / "scenarios" / f"{name}.yaml").write_text(
            f"name: {name}\nturns: [{said}]\nchecks: [{{contains: ok}}]\n"
        )
    with LocalServer(answered) as server:
        done = convy(
            "run", "--agent-url", f"{server.url}/chat", "--repeat", "2", "--fail-fast=false", cwd=tmp_path
        )
    assert done.returncode == 1, done.stdout + done.stderr
    console = done.stdout.split("All 2 scenarios")[0]
    assert "agent failed (2 of 2)" in console and "http_500" in console
    assert "the orders database is down" in console
    comment = (one_run(tmp_path / "results") / "comment.md").read_text()
    first = comment.split("<details>", 1)[0]
    breaks = first[first.index("**breaks") :]
    assert "the agent failed 2 of 2: http\\_500" in breaks and "the orders database is down" in breaks
