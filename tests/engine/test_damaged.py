"""Damaged run folders and hostile project files, as the convy command meets them: skipped lines
are warned about by line number, the first line of an attempt counts, and nothing ends in a
traceback — an unusable folder or file is exit 2 with the reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from convy.demo.localserver import LocalServer
from convy.demo.supportbot import SupportBot
from convy.draw.untrusted import Untrusted


def convy(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_"))}
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "convy", *args], cwd=cwd, env=environ, capture_output=True, text=True
    )


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished demo run (12 attempts), to be copied and damaged."""
    where = tmp_path_factory.mktemp("demo")
    done = convy("run", "--demo", cwd=where)
    assert done.returncode == 0, done.stderr
    (folder,) = (where / "results" / "support").iterdir()
    return folder


def copied(finished: Path, to: Path) -> Path:
    target = to / "results" / "support" / finished.name
    target.mkdir(parents=True)
    for name in ("run.json", "attempts.jsonl"):
        (target / name).write_bytes((finished / name).read_bytes())
    return target


def test_a_malformed_line_and_a_repeated_attempt_are_skipped_with_warnings_in_compare_and_export(
    finished: Path, tmp_path: Path
) -> None:
    folder = copied(finished, tmp_path)
    lines = (folder / "attempts.jsonl").read_bytes().splitlines(keepends=True)
    damaged = [lines[0], b'{"scenario": "x", "garbage\n', *lines[1:6], lines[2], *lines[6:]]
    (folder / "attempts.jsonl").write_bytes(b"".join(damaged))
    compared = convy("compare", str(folder), str(finished), cwd=tmp_path)
    assert compared.returncode in (0, 1, 3), compared.stderr
    assert "Traceback" not in compared.stderr
    assert "attempts.jsonl line 2: malformed" in compared.stderr
    assert "attempts.jsonl line 8: a second line for" in compared.stderr
    exported = convy("export", str(folder), cwd=tmp_path)
    assert exported.returncode == 0 and "line 2: malformed" in exported.stderr
    rows = (folder / "export" / "attempts.jsonl").read_text().splitlines()
    assert len(rows) == 12, "every attempt once: the malformed line skipped, the repeated one too"
    assert not [p for p in (folder / "export").iterdir() if p.name.endswith(".partial")]


def test_resume_of_a_folder_whose_run_json_is_truncated_is_exit_2_naming_it(
    finished: Path, tmp_path: Path
) -> None:
    folder = copied(finished, tmp_path)
    (folder / "run.json").write_bytes((folder / "run.json").read_bytes()[:57])
    for command in (
        ("resume", str(folder), "--demo"),
        ("compare", str(folder), str(finished)),
        ("export", str(folder)),
    ):
        done = convy(*command, cwd=tmp_path)
        assert done.returncode == 2, (command, done.stderr)
        assert "Traceback" not in done.stderr and "run.json cannot be read" in done.stderr


def test_report_of_every_run_names_an_unreadable_one_and_goes_on(finished: Path, tmp_path: Path) -> None:
    good = copied(finished, tmp_path)
    bad = good.parent / "20261201T000000Z-dead"
    bad.mkdir()
    (bad / "run.json").write_text('{"format": 1, "spec": ')
    (bad / "attempts.jsonl").write_text("not json at all\n")
    done = convy("report", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "cannot read" in done.stderr and bad.name in done.stderr
    assert (good / "report.html").is_file() and (tmp_path / "results" / "index.html").is_file()


def test_a_scenario_file_nested_500_levels_is_exit_2_not_a_recursion_error(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    deep = "[" * 500 + "]" * 500
    (tmp_path / "scenarios" / "deep.yaml").write_text(f"name: deep\nuser: {deep}\nclaims: [c]\n")
    done = convy(
        "run",
        "--agent-url",
        "http://127.0.0.1:9/chat",
        "--model-url",
        "http://127.0.0.1:9/v1",
        "--model-key",
        "k-not-secret",
        "--user-model",
        "u",
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    # libyaml's loader reads the nesting (the value is then not a text); the pure-Python one gives up
    # on it: either way a configuration error at the file, never a traceback
    assert "Traceback" not in done.stderr and "deep.yaml" in done.stderr
    assert "nested too deeply" in done.stderr or "deep.yaml:2: Expected `str`, got `array`" in done.stderr


def test_scenario_names_and_claims_reach_the_console_without_control_characters(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "evil.yaml").write_text(
        'name: "\\e[31mred\\e[0m::error::owned"\n'
        "user: A customer.\n"
        "opening: Hi\n"
        'claims:\n  - "::warning::\\e[2J a claim that fails"\n'
    )

    def scripted(request: dict[str, object]) -> str:
        if request.get("response_format"):
            return json.dumps({"decisions": [{"pass": False, "reason": "\x1b[31mno\x1b[0m"}]})
        return "FINISHED"

    from tests.servers.models import ModelServer

    with LocalServer(SupportBot()) as agent, ModelServer(scripted) as models:
        done = convy(
            "run",
            "--agent-url",
            f"{agent.url}/chat",
            "--agent-body",
            '{"messages": "$messages", "session": "$conversation"}',
            "--agent-answer",
            "reply.text",
            "--model-url",
            models.url,
            "--model-key",
            "k-not-secret",
            "--user-model",
            "u",
            "--repeat",
            "1",
            cwd=tmp_path,
        )
    assert done.returncode in (0, 1), done.stderr
    printed = done.stdout + done.stderr
    assert "\x1b" not in printed, printed
    assert not [line for line in printed.splitlines() if line.lstrip().startswith("::")]
    assert "red" in printed and "a claim that fails" in printed


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[31mred\x1b[0m", "\ufffd[31mred\ufffd[0m"),
        ("::error::x", ":\u200b:error::x"),
        ("  ##[group]x", "##[group]x".replace("#", "#\u200b", 1)),
        ("a\nb\r::set-output", "a b ::set-output"),
        ("\u202eevil", "\ufffdevil"),
    ],
)
def test_untrusted_text_for_the_console_is_one_line_without_controls_or_commands(
    text: str, shown: str
) -> None:
    assert Untrusted(text=text).console(100) == shown


def test_an_attempts_file_that_is_a_folder_is_exit_2_naming_it(finished: Path, tmp_path: Path) -> None:
    folder = copied(finished, tmp_path)
    (folder / "attempts.jsonl").unlink()
    (folder / "attempts.jsonl").mkdir()
    commands = (
        ("compare", str(folder), str(finished)),
        ("export", str(folder)),
        ("resume", str(folder), "--demo"),
    )
    for command in commands:
        done = convy(*command, cwd=tmp_path)
        assert done.returncode == 2, (command, done.stderr)
        assert "Traceback" not in done.stderr and "attempts.jsonl cannot be read" in done.stderr


def test_attempt_lines_the_run_does_not_have_are_skipped_with_warnings_in_compare_and_export(
    finished: Path, tmp_path: Path
) -> None:
    folder = copied(finished, tmp_path)
    lines = (folder / "attempts.jsonl").read_bytes().splitlines(keepends=True)
    first = json.loads(lines[0])  # any attempt: the strays below take its scenario with other indexes
    assert json.loads((folder / "run.json").read_text())["spec"]["repeat"] == 3
    strays = [
        dict(first, index=3),
        dict(first, index=4),
        dict(first, index=-1),
        dict(first, scenario="ghost"),
    ]
    (folder / "attempts.jsonl").write_bytes(
        b"".join(lines) + b"".join(json.dumps(s).encode() + b"\n" for s in strays)
    )
    compared = convy("compare", str(folder), str(finished), cwd=tmp_path)
    assert compared.returncode in (0, 1, 3), compared.stderr
    assert "Traceback" not in compared.stderr
    name = first["scenario"]
    assert (
        f"attempts.jsonl line 13: {name!r} has no attempt index 3 (the run's are 0 to 2), skipped"
        in compared.stderr
    )
    assert "line 14:" in compared.stderr and "line 15:" in compared.stderr
    assert "attempts.jsonl line 16: scenario 'ghost' is not one of the run's, skipped" in compared.stderr
    (judged,) = [line.split() for line in compared.stdout.splitlines() if line.startswith("attempts judged")]
    assert judged[2:] == ["12", "of", "12", "12", "of", "12"], compared.stdout
    exported = convy("export", str(folder), cwd=tmp_path)
    assert exported.returncode == 0 and "line 16: scenario 'ghost'" in exported.stderr
    rows = [json.loads(row) for row in (folder / "export" / "attempts.jsonl").read_text().splitlines()]
    assert len(rows) == 12 and "ghost" not in {row.get("scenario") for row in rows}


def test_a_run_folder_without_attempts_jsonl_is_warned_of_naming_it(finished: Path, tmp_path: Path) -> None:
    folder = copied(finished, tmp_path)
    (folder / "attempts.jsonl").unlink()
    for command in (
        ("report",),
        ("report", str(folder)),
        ("compare", str(folder), str(finished)),
        ("export", str(folder)),
        ("resume", str(folder), "--demo"),
    ):
        done = convy(*command, cwd=tmp_path)
        assert "Traceback" not in done.stderr, (command, done.stderr)
        warned = [line for line in done.stderr.splitlines() if "attempts.jsonl: missing" in line]
        assert len(warned) == 1 and folder.name in warned[0], (command, done.stderr)
    assert len((folder / "attempts.jsonl").read_bytes().splitlines()) == 12, "the resume played them again"


def test_resume_warns_of_a_skipped_line_once(finished: Path, tmp_path: Path) -> None:
    folder = copied(finished, tmp_path)
    with (folder / "attempts.jsonl").open("ab") as stream:
        stream.write(b"garbage\n")
    done = convy("resume", str(folder), "--demo", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    assert done.stderr.count("attempts.jsonl line 13: malformed") == 1, done.stderr
