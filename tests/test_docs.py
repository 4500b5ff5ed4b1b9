"""The docs a newcomer starts from: a README of at most 400 lines whose first screen has the demo,
the tests and the workflow to paste; a site that MkDocs builds strictly (a broken link or anchor
fails); a settings page written from the code; and every example of every page — the README's and
each page's under docs/, those added later too — read by convy as a user's file would be: scenarios,
agent files, labels, settings and pyproject tables, the Python program and every command's flags.
(Agent examples are played in tests/engine/test_readme_agents.py, workflows linted in
tests/action/test_workflows.py, pins checked in tests/action/test_pin.py.)"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path
from typing import Any, get_args

import msgspec
import pytest
import yaml

from convy import Setting
from convy.demo.servers import DemoServers
from convy.errors import ConfigurationError
from convy.play.wire.spec import Protocol
from convy.project.labels import LabelFile
from convy_action.runner.settings import NAMES, ActionSettings
from convy_action.runner.settings_page import SettingsPage
from tests.support.docs import README, ROOT, Block, blocks, page

TEMPLATE = ROOT / "src" / "convy" / "template" / ".github" / "workflows" / "convy.yml"
FIRST_SCREEN = 40
"""Lines a reader sees before scrolling, where the workflow must start."""
ENVIRONMENT = {
    "AGENT_URL": "http://127.0.0.1:9",
    "AGENT_TOKEN": "a-token-of-the-docs",
    "ANTHROPIC_API_KEY": "a-key-of-the-docs",
}
"""The variables the examples name, as a user would have set them."""
AGENT = "url: http://127.0.0.1:9/chat\nbody: {message: $message}\nanswer: reply\n"
SCENARIO = "name: example\nturns: [Hello]\nchecks:\n  - contains: hello\n"


def convy(*args: str, cwd: Path, environ: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The `convy` command, run as a user runs it, in `cwd`."""
    kept = {name: value for name, value in os.environ.items() if not name.startswith(("CONVY_", "INPUT_"))}
    return subprocess.run(
        [sys.executable, "-m", "convy", *args],
        cwd=cwd,
        env={**kept, **ENVIRONMENT, **(environ or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def project(root: Path, scenario: str = SCENARIO, agent: str = AGENT, pyproject: str = "") -> Path:
    """A project of one scenario and one agent, and settings that send nothing anywhere."""
    (root / "scenarios").mkdir(parents=True)
    (root / "agents").mkdir()
    (root / "scenarios" / "example.yaml").write_text(scenario)
    (root / "agents" / "bot.yaml").write_text(agent)
    (root / "pyproject.toml").write_text(
        pyproject or '[tool.convy]\nmodel-url = "http://127.0.0.1:9/v1"\nuser-model = "a-model"\n'
    )
    return root


def read_by_convy(root: Path) -> None:
    """`convy estimate` reads the project (settings, scenarios, agent) and sends nothing: exit 0."""
    done = convy(
        "estimate",
        cwd=root,
        environ={"CONVY_MODEL_URL": "http://127.0.0.1:9/v1", "CONVY_USER_MODEL": "a-model"},
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_readme_is_short_and_its_first_screen_shows_the_demo_the_tests_and_the_workflow() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 400
    readme = [block for block in blocks() if block.page == README]
    workflow = next(block for block in readme if block.language == "yaml")
    assert workflow.text == TEMPLATE.read_text(), "the workflow to paste is the one `convy init` writes"
    assert workflow.line <= FIRST_SCREEN
    commands = [block.text for block in readme if block.line < workflow.line]
    assert len(commands) == 2, "two set-up commands: the demo and the tests"
    demo, tests = commands
    assert "-m convy_action --dry-run --demo" in demo and "pip install -e ." in demo
    assert tests == "bash .ci/run\n"
    ci = (ROOT / ".ci" / "run").read_text()
    assert ".venv/bin/mkdocs build --strict" in ci
    assert ci.rstrip().splitlines()[-1].startswith(".venv/bin/python -m pytest"), "the tests are pytest's"


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """mkdocs.yml makes a link or an anchor that is not found a warning, and strict fails on it."""
    mkdocs = Path(sys.executable).parent / "mkdocs"
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "settings" / "index.html").is_file()


def test_a_broken_anchor_fails_the_build(tmp_path: Path) -> None:
    """The same configuration over a page with a link to an anchor no page has: the build fails."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n[the gate](gate.md#no-such-rule)\n")
    (docs / "gate.md").write_text("# The gate\n\n## How the gate decides\n")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config = {key: config[key] for key in ("site_name", "strict", "theme", "validation")}
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "mkdocs"),
            "build",
            "--strict",
            "--site-dir",
            str(tmp_path / "site"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert done.returncode != 0 and "no-such-rule" in done.stderr, done.stderr


def test_the_settings_page_is_written_from_the_code() -> None:
    assert page("settings.md") == SettingsPage().text(), (
        "docs/settings.md differs from the settings: regenerate it as its first lines say"
    )


def test_the_settings_page_has_every_setting_with_its_names_default_and_meaning() -> None:
    text = page("settings.md")
    for name in NAMES:
        setting = Setting(name, ActionSettings)
        section = text.split(f"\n### {name}\n", 1)[1].split("\n### ", 1)[0]
        assert setting.description[1:] in section, name
        assert f"flag `{setting.flag}`" in section and f"variable `{setting.variable}`" in section, name
        assert f"input `{name}`" in section, name
        assert "default" in section, name
    protocol = text.split("\n### agent-protocol\n", 1)[1].split("\n### ", 1)[0]
    assert all(f"`{value}`" in protocol for value in taken_protocols())


def taken_protocols() -> set[str]:
    """The protocols the setting `agent-protocol` takes (an agent file takes every one of Protocol)."""
    match Setting("agent-protocol").field.type:
        case msgspec.inspect.LiteralType(values=values):
            return {str(value) for value in values} - {""}
        case _:
            raise TypeError("agent-protocol is a choice")


def test_the_agents_page_names_every_protocol_and_those_the_setting_does_not_take() -> None:
    text = page("agents.md")
    assert sorted(re.findall(r"^\| \[`([a-z0-9-]+)`\]\(#", text, re.M)) == sorted(get_args(Protocol))
    file_only = sorted(set(get_args(Protocol)) - taken_protocols())
    sentence = next((line for line in text.split("\n\n") if "need an agent file" in line), "")
    assert all(f"`{name}`" in sentence for name in file_only), (file_only, sentence)
    assert bool(sentence) == bool(file_only)


def yaml_examples() -> list[Block]:
    """The yaml blocks that are neither workflows (linted elsewhere) nor agent examples (played)."""
    return [
        block for block in blocks("yaml") if not block.example and not re.search(r"^jobs:", block.text, re.M)
    ]


def kind(data: Any) -> str:
    """What a yaml example is, as convy would read it."""
    if (
        isinstance(data, list)
        and data
        and all(isinstance(item, dict) and "decisions" in item for item in data)
    ):
        return "labels"
    if isinstance(data, dict) and "url" in data:
        return "agent"
    if isinstance(data, dict) and "name" in data and {"claims", "checks"} & set(data):
        return "scenario"
    if isinstance(data, dict) and data and all(key in NAMES for key in data):
        return "settings"
    return "fragment"


@pytest.mark.parametrize("block", yaml_examples(), ids=lambda block: block.where)
def test_every_yaml_example_is_read_by_convy(tmp_path: Path, block: Block) -> None:
    data = yaml.safe_load(block.text)
    match kind(data):
        case "labels":
            path = tmp_path / "labels" / "example.yaml"
            path.parent.mkdir()
            path.write_text(block.text)
            assert len(LabelFile(path, tmp_path).labels()) == len(data)
        case "agent":
            root = project(tmp_path / "project", agent=block.text)
            for name in ("ca.pem", "client.pem", "client.key"):  # the files its `tls` names
                (root / "certs").mkdir(exist_ok=True)
                (root / "certs" / name).write_text("")
            read_by_convy(root)
        case "scenario":
            read_by_convy(project(tmp_path / "project", scenario=block.text))
        case "settings":
            for name, value in data.items():
                Setting(name, ActionSettings).check(value, block.where)
        case _:
            assert data is not None, f"{block.where}: an empty yaml example"


def test_a_yaml_example_convy_refuses_fails_its_test(tmp_path: Path) -> None:
    """The check above can fail: a scenario example with a key convy does not know is exit 2."""
    root = project(tmp_path, scenario=SCENARIO + "claim: not a key\n")
    done = convy("estimate", cwd=root)
    assert done.returncode == 2 and "unknown key `claim`" in done.stdout + done.stderr
    with pytest.raises(ConfigurationError):
        Setting("agent-protocol", ActionSettings).check("langgraf", "docs")


@pytest.mark.parametrize("block", blocks("toml"), ids=lambda block: block.where)
def test_every_pyproject_example_is_read_by_convy(tmp_path: Path, block: Block) -> None:
    assert "convy" in tomllib.loads(block.text)["tool"]
    read_by_convy(project(tmp_path, pyproject=block.text))


@pytest.mark.parametrize("block", blocks("json"), ids=lambda block: block.where)
def test_every_json_example_is_json(block: Block) -> None:
    assert json.loads(block.text)


@pytest.mark.parametrize("block", blocks("python"), ids=lambda block: block.where)
def test_every_python_example_runs_in_the_demo_project(tmp_path: Path, block: Block) -> None:
    """A program of the docs, run in a copy of the demo project whose settings point at the demo's
    agent and models (started here), as a program reading `[tool.convy]` finds them."""
    with DemoServers() as demo:
        root = tmp_path / "project"
        shutil.copytree(demo.project, root)
        agent = root / "agents" / "support.yaml"
        agent.write_text(agent.read_text().replace("${CONVY_DEMO_URL}", demo.environ()["CONVY_DEMO_URL"]))
        settings = "".join(
            f'{name} = "{value}"\n' for name, value in demo.flags().items() if name != "project"
        )
        with (root / "pyproject.toml").open("a") as pyproject:
            pyproject.write(f"\n[tool.convy]\n{settings}")
        (root / "example.py").write_text(block.text)
        done = subprocess.run(
            [sys.executable, "example.py"], cwd=root, capture_output=True, text=True, timeout=300
        )
    assert done.returncode == 0, done.stdout + done.stderr


def commands() -> list[tuple[str, str, tuple[str, ...]]]:
    """(where, program, flags) of every `convy <subcommand>`, `python -m convy_action` and `pytest` of the
    shell examples: the program as `--help` is asked of it, and the flags the example gives it."""
    found = []
    for block in [*blocks("sh"), *blocks("bash"), *blocks("shell")]:
        for number, line in enumerate(block.text.replace("\\\n", " ").splitlines()):
            words = shlex.split(line, comments=True)
            for at, word in enumerate(words):
                if (
                    (word == "convy" or word.endswith("/convy"))
                    and at + 1 < len(words)
                    and words[at - 1 : at] != ["-m"]
                ):
                    program, rest = f"convy {words[at + 1]}", words[at + 2 :]
                elif word == "convy_action" and words[at - 1 : at] == ["-m"]:
                    program, rest = "convy_action", words[at + 1 :]
                elif word == "pytest":
                    program, rest = "pytest", words[at + 1 :]
                else:
                    continue
                ends = [i for i, w in enumerate(rest) if w in {"|", "&&", ";"}]
                given = rest[: ends[0]] if ends else rest
                flags = tuple(w.split("=")[0] for w in given if w.startswith("--"))
                found.append((f"{block.where} (+{number})", program, flags))
    return found


@cache
def help_text(program: str) -> str:
    arguments = ["-m", *program.split()]  # `-m convy run`, `-m convy_action`, `-m pytest`
    done = subprocess.run(
        [sys.executable, *arguments, "--help"], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, f"{program}: {done.stderr}"
    return done.stdout


def test_every_command_example_names_a_subcommand_and_flags_that_exist() -> None:
    found = commands()
    assert {program for _, program, _ in found} >= {"convy run", "convy export", "convy_action"}
    for where, program, flags in found:
        text = help_text(program)
        for flag in flags:
            assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text), (
                f"{where}: {program} has no {flag}"
            )
