"""`convy label` (docs/labels.md) driven through a real pseudo-terminal: blind (the judge's reason is
never on the screen before the person answered that claim), each answer in the labels file as it is
given (the process killed mid-way loses none), no terminal on stdin is exit 2, a run's zip labelled
like its folder, --failing asks failing attempts first and marks them, and a second session asks
only what the file does not hold yet."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time
import zipfile
from pathlib import Path

import yaml

from convy.play.outcome import ClaimResult, Outcome, Turn, Verdict
from convy.project.labels import Labels
from convy.project.scenarios import Scenarios
from convy.store.journal import RunJournal
from convy.store.runfile import FORMAT, RunFile, RunSpec, ScenarioEntry

RUN = "20261203T063334Z-3d13"
SCENARIO = """\
name: refund
user: You want a refund.
opening: "My order is late."
claims:
  - The agent offers a refund.
  - claim: How clear was the agent?
    grades: {clear: true, vague: false}
"""
REFUND, CLEAR = "The agent offers a refund.", "How clear was the agent?"
COUNT = 6
FAILING = {1, 4}
"""The attempts whose refund claim the judge failed."""


def outcome(index: int) -> Outcome:
    fails = index in FAILING
    return Outcome(
        scenario="refund",
        index=index,
        fingerprint="f",
        turns=(
            Turn(user="My order is late.", agent=f"Answer number {index}: here is a refund.", seconds=0.1),
        ),
        seconds=0.1,
        decision=Verdict(
            holds=not fails,
            claims=(
                ClaimResult(claim=REFUND, passed=not fails, reason=f"secret-reason-{index}-refund"),
                ClaimResult(claim=CLEAR, passed=True, grade="clear", reason=f"secret-reason-{index}-clear"),
            ),
        ),
    )


def project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "project"
    (root / "scenarios").mkdir(parents=True)
    (root / "scenarios" / "refund.yaml").write_text(SCENARIO)
    folder = root / "results" / "bot" / RUN
    folder.mkdir(parents=True)
    spec = RunSpec(agent="bot", scenarios=(ScenarioEntry(name="refund", fingerprint="f"),), repeat=COUNT)
    run = RunFile(format=FORMAT, spec=spec, status="finished", started="2026-12-03T06:33:34Z")
    RunJournal(folder).write(run, [outcome(i) for i in range(COUNT)])
    return root, folder


class Terminal:
    """`convy label` with a pseudo-terminal for its stdin, stdout and stderr, and as its controlling
    terminal (so Ctrl+C typed there interrupts it)."""

    def __init__(self, root: Path, *args: str) -> None:
        self.master, slave = pty.openpty()
        environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONVY_", "INPUT_"))}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "convy", "label", *args, "--project", str(root)],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=root,
            env={**environ, "COLUMNS": "200"},
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        os.close(slave)
        self.screen = ""
        self.seen = 0
        """How far the screen was read by `until`."""

    def until(self, text: str, timeout: float = 60) -> str:
        """Read the screen until `text` appears after what was read so far; what came, up to it."""
        start = self.seen
        deadline = time.monotonic() + timeout
        while text not in self.screen[start:]:
            left = deadline - time.monotonic()
            assert left > 0, f"never saw {text!r}; the screen: {self.screen[-2000:]}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    chunk = b""
                assert chunk, f"the command ended before {text!r}; the screen: {self.screen[-2000:]}"
                self.screen += chunk.decode("utf-8", "replace")
        end = self.screen.index(text, start) + len(text)
        self.seen = end
        return self.screen[start:end]

    def answer(self, text: str) -> str:
        """What the screen showed up to the next question, then `text` typed."""
        shown = self.until("] > ")
        os.write(self.master, (text + "\n").encode())
        return shown

    def ended(self) -> int:
        try:
            while os.read(self.master, 65536):
                pass
        except OSError:
            pass
        code = self.process.wait(timeout=60)
        os.close(self.master)
        return code


def labels(path: Path) -> list[dict[str, object]]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, list)
    return data


def test_labelling_is_blind_and_each_answer_is_in_the_file_as_it_is_given(tmp_path: Path) -> None:
    root, folder = project(tmp_path)
    terminal = Terminal(root, str(folder), "--count", "3")
    target = root / "labels" / f"{RUN}.yaml"
    for asked, typed in enumerate(["y", "2", "n", "clear", "y"]):
        terminal.answer(typed)
        shown = terminal.screen[: terminal.seen]
        assert shown.count("secret-reason") == asked, "a judge's reason shown before the answer"
        if asked == 4:
            break
        after = terminal.until("(you ")
        assert "judge:" in after and terminal.screen.count("secret-reason") == asked + 1
        decided = [d for item in labels(target) for d in item["decisions"]]  # type: ignore[attr-defined]
        assert len(decided) == asked + 1, "the answer is not in the file as soon as it is given"
    time.sleep(0.5)
    terminal.process.send_signal(signal.SIGKILL)
    terminal.ended()
    written = labels(target)
    assert [len(item["decisions"]) for item in written] == [2, 2, 1]  # type: ignore[arg-type]
    first = written[0]
    assert first["scenario"] == "refund" and first["source"]["run"] == RUN  # type: ignore[index]
    assert first["decisions"] == {REFUND: True, CLEAR: "vague"}
    assert written[1]["decisions"] == {REFUND: False, CLEAR: "clear"}
    assert "chosen" not in first
    used, stale = Labels(root / "labels", root).against(Scenarios(root).all())
    assert len(used) == 3 and stale == () and all(u.label.chosen == "random" for u in used)
    assert used[0].label.transcript[0].agent.startswith("Answer number")


def test_a_second_session_asks_only_what_the_file_does_not_hold_in_the_seeded_order(tmp_path: Path) -> None:
    root, folder = project(tmp_path)
    target = root / "labels" / f"{RUN}.yaml"
    terminal = Terminal(root, str(folder), "--count", "2")
    for _ in range(2):
        terminal.answer("y")
        terminal.answer("s")
    terminal.until("written to")
    assert terminal.ended() == 0
    first = [item["source"]["index"] for item in labels(target)]  # type: ignore[index]
    terminal = Terminal(root, str(folder), "--count", "10")
    for _ in range(COUNT - 2):
        terminal.answer("n")
        terminal.answer("q" if _ == COUNT - 3 else "s")
    assert terminal.ended() == 0
    indices = [item["source"]["index"] for item in labels(target)]  # type: ignore[index]
    assert indices[:2] == first and sorted(indices) == list(range(COUNT))

    again = tmp_path / "again"
    root2, folder2 = project(again)
    terminal = Terminal(root2, str(folder2), "--count", "2")
    for _ in range(2):
        terminal.answer("y")
        terminal.answer("s")
    assert terminal.ended() == 0
    assert [item["source"]["index"] for item in labels(root2 / "labels" / f"{RUN}.yaml")] == first, (  # type: ignore[index]
        "the same run id draws the same attempts"
    )


def test_failing_attempts_come_first_and_are_marked(tmp_path: Path) -> None:
    root, folder = project(tmp_path)
    target = tmp_path / "mine.yaml"
    terminal = Terminal(root, str(folder), "--failing", "--count", "4", "--to", str(target))
    for _ in range(4):
        terminal.answer("y")
        terminal.answer("s")
    assert terminal.ended() == 0
    written = labels(target)
    assert [item["source"]["index"] in FAILING for item in written] == [True, True, False, False]  # type: ignore[index]
    assert [item.get("chosen") for item in written] == ["failing", "failing", None, None]


def test_a_run_s_zip_is_labelled_like_its_folder(tmp_path: Path) -> None:
    root, folder = project(tmp_path)
    zipped = tmp_path / f"{RUN}.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        for name in ("run.json", "attempts.jsonl"):
            archive.write(folder / name, name)
    terminal = Terminal(root, str(zipped), "--count", "1")
    terminal.answer("n")
    terminal.answer("vague")
    terminal.until("written to")
    assert terminal.ended() == 0
    written = labels(root / "labels" / f"{RUN}.yaml")
    assert written[0]["source"] == {"run": RUN, "index": written[0]["source"]["index"]}  # type: ignore[index]
    assert written[0]["decisions"] == {REFUND: False, CLEAR: "vague"}


def test_without_a_terminal_on_stdin_it_is_exit_2_saying_so(tmp_path: Path) -> None:
    root, folder = project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "convy", "label", str(folder), "--project", str(root)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=root,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "not a terminal" in done.stderr
    assert not (root / "labels").exists()


def test_ctrl_c_stops_with_130_and_keeps_every_answer(tmp_path: Path) -> None:
    root, folder = project(tmp_path)
    terminal = Terminal(root, str(folder))
    terminal.answer("n")
    terminal.answer("1")
    terminal.answer("y")
    terminal.until("] > ")
    os.write(terminal.master, b"\x03")
    terminal.until("kept in")
    assert terminal.ended() == 130
    written = labels(root / "labels" / f"{RUN}.yaml")
    assert [item["decisions"] for item in written][0] == {REFUND: False, CLEAR: "clear"}
    assert sum(len(item["decisions"]) for item in written) == 3  # type: ignore[arg-type]
