"""Control characters are replaced in every line the action logs (the first hour): an agent error
or a judge reason with ESC or BEL in it reaches the log, its last line above all, only with them
replaced, as on the command line."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from convy.demo.localserver import LocalServer
from convy_action.action import Action
from convy_action.github.retries import Retries

FAST = Retries(attempts=3, first_wait=0.01, longest_wait=2.0, total_wait=5.0, secondary_wait=0.01)
Triple = tuple[int, dict[str, str], bytes]
HOSTILE = "\x1b[31mthe database\x07 is \x1b]0;owned\x07down\x1b[0m"


def failing(method: str, path: str, headers: dict[str, str], body: bytes) -> Triple:
    return 500, {"Content-Type": "application/json"}, json.dumps({"error": {"message": HOSTILE}}).encode()


def test_no_line_of_the_log_carries_a_control_character(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s.yaml").write_text("name: s\nturns: [hi]\nchecks: [{contains: x}]\n")
    out = io.StringIO()
    with LocalServer(failing) as server:
        argv = ["--dry-run", "--agent-url", f"{server.url}/chat", "--repeat", "2"]
        code = Action(argv, {}, out, tmp_path, FAST).exit_code()
    log = out.getvalue()
    assert code == 1, log
    assert "the database" in log and "down" in log, "the agent's words are still there"
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", log), [
        line for line in log.splitlines() if "\x1b" in line
    ]
