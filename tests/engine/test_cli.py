"""The convy command end to end, as a user runs it: real processes, real local servers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from convy.demo.localserver import LocalServer
from convy.demo.scripted import ScriptedModels
from convy.demo.supportbot import SupportBot
from convy.store.runfile import FORMAT
from tests.support.command import convy, lines, only_run


def test_demo_plays_the_bundled_project_into_a_real_run_folder(tmp_path: Path) -> None:
    done = convy("run", "--demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    folder = only_run(tmp_path / "results")
    run = json.loads((folder / "run.json").read_text())
    attempts = lines(folder)
    assert run["status"] == "finished" and run["spec"]["agent"] == "support"
    assert len(attempts) == 12
    holds = {(a["scenario"], a["decision"]["holds"]) for a in attempts}  # type: ignore[index]
    assert holds == {
        ("order-status", True),
        ("refund-late-order", True),
        ("cancel-subscription", True),
        ("talk-to-human", False),
    }
    graded = [
        c
        for a in attempts
        if a["scenario"] == "cancel-subscription"
        for c in a["decision"]["claims"]
        if c["grade"]
    ]  # type: ignore[index, union-attr]
    assert graded and all(c["grade"] == "clear" for c in graded)
    refund = next(a for a in attempts if a["scenario"] == "refund-late-order")
    assert len(refund["turns"]) >= 2, "the refund dialogue takes several turns"  # type: ignore[arg-type]


def test_init_writes_a_starter_project_and_never_overwrites(tmp_path: Path) -> None:
    first = convy("init", "starter", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    written = {
        str(p.relative_to(tmp_path / "starter")) for p in (tmp_path / "starter").rglob("*") if p.is_file()
    }
    assert {"agents/example.yaml", ".github/workflows/convy.yml"} <= written
    assert len([w for w in written if w.startswith("scenarios/")]) == 3
    from convy.project.scenarios import Scenarios

    scripted = [d.scenario for d in Scenarios(tmp_path / "starter").all() if d.scenario.turns]
    assert len(scripted) == 1 and scripted[0].checks and not scripted[0].user, "one scripted scenario"
    again = convy("init", "starter", cwd=tmp_path)
    assert again.returncode == 2 and "never overwrites" in again.stderr


def test_a_bad_scenario_is_exit_2_with_file_and_line_before_any_request(demo_project: Path) -> None:
    (demo_project / "scenarios" / "bad.yaml").write_text("user: x\nclaims: []\n")
    seen: list[str] = []

    def route(
        method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        seen.append(path)
        return 500, {}, b""

    with LocalServer(route) as server:
        done = convy(
            "run",
            "--project",
            str(demo_project),
            "--model-url",
            server.url,
            "--user-model",
            "m",
            cwd=demo_project,
            env={"CONVY_DEMO_URL": server.url},
        )
    assert done.returncode == 2
    assert "scenarios/bad.yaml:2" in done.stderr
    assert seen == []


def test_a_run_killed_with_sigkill_is_finished_by_resume_with_nothing_lost_or_doubled(
    demo_project: Path,
) -> None:
    bot = SupportBot()

    def slow(
        method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        time.sleep(0.15)
        return bot(method, path, headers, body)

    with LocalServer(slow) as agent, LocalServer(ScriptedModels.bundled()) as models:
        args = (
            "--project",
            str(demo_project),
            "--model-url",
            models.url,
            "--user-model",
            "u",
            "--concurrency",
            "2",
            "--repeat",
            "3",
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_"))}
        env["CONVY_DEMO_URL"] = agent.url
        process = subprocess.Popen(
            [sys.executable, "-m", "convy", "run", *args],
            cwd=demo_project,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        folder: Path | None = None
        while process.poll() is None:
            runs = list((demo_project / "results").glob("*/*/attempts.jsonl"))
            if runs and len(runs[0].read_text().splitlines()) >= 3:
                folder = runs[0].parent
                break
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert folder is not None, "the run never recorded 3 attempts"
        before = len(lines(folder))
        assert json.loads((folder / "run.json").read_text())["status"] == "running"
        assert before < 12
        done = convy("resume", str(folder), *args, cwd=demo_project, env={"CONVY_DEMO_URL": agent.url})
    assert done.returncode == 0, done.stderr
    keys = [(a["scenario"], a["index"]) for a in lines(folder)]
    assert len(keys) == 12 and len(set(keys)) == 12
    assert json.loads((folder / "run.json").read_text())["status"] == "finished"


def test_resume_refuses_a_folder_of_a_newer_format(tmp_path: Path) -> None:
    folder = tmp_path / "results" / "a" / "r"
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(
        json.dumps({"format": 99, "spec": {}, "status": "running", "started": ""})
    )
    done = convy("resume", str(folder), cwd=tmp_path)
    assert done.returncode == 2
    assert "format 99" in done.stderr and f"format {FORMAT}" in done.stderr


def test_a_deployed_agent_is_played_with_no_files_but_scenarios(tmp_path: Path) -> None:
    from tests.servers.agents import AgentServer
    from tests.servers.models import ModelServer

    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "hello.yaml").write_text(
        "user: Say hello.\nopening: hi\nclaims: [The agent answers.]\n"
    )

    def decided(request: dict[str, object]) -> str:
        return (
            '{"decisions": [{"pass": true, "reason": "ok"}]}'
            if request.get("response_format")
            else "FINISHED"
        )

    with AgentServer() as agent, ModelServer(decided) as models:
        done = convy(
            "run",
            "--agent-url",
            f"{agent.url}/ok",
            "--model-url",
            models.url,
            "--model-key",
            "sk-secret-value",
            "--user-model",
            "gpt-test",
            "--repeat",
            "2",
            cwd=tmp_path,
        )
        keys = {h.get("authorization") for h in models.headers}
    assert done.returncode == 0, done.stderr
    folder = only_run(tmp_path / "results")
    assert folder.parent.name == "agent" and len(lines(folder)) == 2
    assert keys == {"Bearer sk-secret-value"}
    written = "".join(p.read_text() for p in folder.iterdir() if p.is_file())
    assert "sk-secret-value" not in written + done.stdout + done.stderr, "the key is never written or printed"


def test_a_second_process_playing_the_same_folder_gets_exit_2(tmp_path: Path) -> None:
    import fcntl

    done = convy("run", "--demo", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    folder = only_run(tmp_path / "results")
    with (folder / "run.lock").open("a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        again = convy("resume", str(folder), "--demo", cwd=tmp_path)
    assert again.returncode == 2 and "another process" in again.stderr


def test_two_demo_runs_then_compare_prints_the_comparison_and_writes_its_files(tmp_path: Path) -> None:
    assert convy("run", "--demo", cwd=tmp_path).returncode == 0
    first = only_run(tmp_path / "results")
    second_run = convy("run", "--demo", "--baseline", str(first), cwd=tmp_path)
    assert second_run.returncode == 0, second_run.stderr
    second = next(p for p in (tmp_path / "results" / "support").iterdir() if p != first)
    done = convy("compare", str(second), str(first), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "PASS" in done.stdout and "75.0% (46.8–91.1%)" in done.stdout
    comment = (second / "comment.md").read_text()
    assert comment.startswith("<!-- convy-action:support -->")
    assert (second / "comparison.html").exists() and (second / "report.html").exists()


def test_the_floor_gates_the_exit_code_of_run(tmp_path: Path) -> None:
    done = convy("run", "--demo", "--min-pass-rate", "0.9", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "min-pass-rate" in done.stdout


def test_report_writes_every_runs_page_and_the_index_and_export_writes_tables(tmp_path: Path) -> None:
    assert convy("run", "--demo", cwd=tmp_path).returncode == 0
    folder = only_run(tmp_path / "results")
    (folder / "report.html").unlink()
    done = convy("report", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (folder / "report.html").exists() and (tmp_path / "results" / "index.html").exists()
    exported = convy("export", str(folder), "--to", str(tmp_path / "tables"), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    names = sorted(p.name for p in (tmp_path / "tables").iterdir())
    assert len(names) == 14 and "attempts.csv" in names and "claims.jsonl" in names


def test_compare_refuses_runs_of_different_agents_and_newer_formats(tmp_path: Path) -> None:
    golden = Path(__file__).resolve().parent.parent / "golden"
    import shutil

    shutil.copytree(golden / "format-1-finished", tmp_path / "a")
    other = json.loads((golden / "format-1-finished" / "run.json").read_text())
    other["spec"]["agent"] = "someone-else"
    shutil.copytree(golden / "format-1-finished", tmp_path / "b")
    (tmp_path / "b" / "run.json").write_text(json.dumps(other))
    differ = convy("compare", str(tmp_path / "a"), str(tmp_path / "b"), cwd=tmp_path)
    assert differ.returncode == 2 and "different agents" in differ.stderr
    newer = convy("compare", str(tmp_path / "a"), str(golden / "format-99"), cwd=tmp_path)
    assert newer.returncode == 2 and "format 99" in newer.stderr


def test_report_shows_the_runs_it_cannot_read_and_writes_the_others(tmp_path: Path) -> None:
    import shutil

    golden = Path(__file__).resolve().parent.parent / "golden"
    shutil.copytree(golden / "format-1-finished", tmp_path / "results" / "support" / "r1")
    shutil.copytree(golden / "format-99", tmp_path / "results" / "support" / "r99")
    done = convy("report", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "cannot read" in done.stderr and "r99" in done.stderr and "format 99" in done.stderr
    assert (tmp_path / "results" / "support" / "r1" / "report.html").exists()
    assert not (tmp_path / "results" / "support" / "r99" / "report.html").exists()
    assert (tmp_path / "results" / "index.html").exists()


def test_a_separate_judge_endpoint_gets_the_judge_s_requests_with_its_own_key(tmp_path: Path) -> None:
    from tests.servers.models import Canned, ModelServer

    refusal = Canned(404, {"object": "error", "message": "The model `judge-x` does not exist."})
    with ModelServer(lambda request: refusal) as judge:
        done = convy(
            "run",
            "--demo",
            "--repeat=1",
            "--judge-model=judge-x",
            f"--judge-url={judge.url}",
            cwd=tmp_path,
            env={"CONVY_JUDGE_KEY": "sk-judge-key-1234"},
        )
    assert done.returncode == 3, done.stderr
    assert judge.requests and all(request["model"] == "judge-x" for request in judge.requests)
    assert all(headers["authorization"] == "Bearer sk-judge-key-1234" for headers in judge.headers)
    assert all(request["max_tokens"] == 1500 and request["temperature"] == 0 for request in judge.requests)
    decisions = [line["decision"] for line in lines(only_run(tmp_path / "results"))]
    assert decisions and all(d["reason"] == "judge_failure" and d["status"] == 404 for d in decisions)  # type: ignore[index]
    assert all(d["message"] == "The model `judge-x` does not exist." for d in decisions)  # type: ignore[index]
    assert "sk-judge-key-1234" not in done.stdout + done.stderr
