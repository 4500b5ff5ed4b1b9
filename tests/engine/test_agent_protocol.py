"""What a run asks of an agent besides its conversations (ready, kept, secrets, model), asked the
same way of every agent: a declarative one answers from its file, a Python one and the wrappers
with what they have."""

from __future__ import annotations

import asyncio
from pathlib import Path

from convy import Plain, Project, Sources
from convy.conduct.assembly import Assembly
from convy.play.agent import PythonAgent, QueuedAgent, TimeLimited
from convy.play.busy import Patience, Places
from convy.play.rate import Pace
from convy.play.wire.agent import JsonAgent


def project(folder: Path, name: str, text: str, environ: dict[str, str]) -> Project:
    (folder / "agents").mkdir()
    (folder / "agents" / name).write_text(text, encoding="utf-8")
    sources = Sources({}, environ, folder)
    return Project(sources.settings(), sources, environ)


def test_a_declarative_agent_tells_its_secrets_and_model_from_its_file(tmp_path: Path) -> None:
    text = (
        "url: http://127.0.0.1:9/v1/chat/completions\nprotocol: openai-chat\nmodel: gpt-4o-mini\n"
        "headers:\n  Authorization: Bearer ${AGENT_TOKEN}\n"
    )
    agent = Assembly(project(tmp_path, "bot.yaml", text, {"AGENT_TOKEN": "tok-1234567890"})).agent()
    assert isinstance(agent, JsonAgent)
    assert "tok-1234567890" in agent.secrets()
    assert agent.model() == ("gpt-4o-mini", "http://127.0.0.1:9/v1/chat/completions")


def test_a_python_agent_has_nothing_to_do_first_keep_or_hide(tmp_path: Path) -> None:
    text = (
        "from convy.fakes import FakeAgent\n\n"
        "class Mine:\n    def conversation(self, key):\n"
        "        return FakeAgent(['hi']).conversation(key)\n\n"
        "agent = Mine()\n"
    )
    agent = Assembly(project(tmp_path, "mine.py", text, {})).agent()
    assert isinstance(agent, PythonAgent) and isinstance(agent, Plain)
    assert asyncio.run(agent.ready()) == ""
    assert (agent.secrets(), agent.model()) == ((), ("", ""))

    async def kept() -> str:
        async with agent.kept(), agent.conversation("k") as conversation:
            return (await conversation.reply("hello")).text

    assert asyncio.run(kept()) == "hi"


def test_the_wrappers_answer_as_the_agent_they_wrap(tmp_path: Path) -> None:
    text = "url: http://127.0.0.1:9/chat\nmodel: m-1\nheaders:\n  X-Key: ${KEY}\nanswer: reply\n"
    agent = Assembly(project(tmp_path, "bot.yaml", text, {"KEY": "key-abcdefghij"})).agent()
    places = Places(1, Pace(0), Patience(1.0))
    for wrapped in (TimeLimited(agent, 5.0), QueuedAgent(agent, places)):
        assert wrapped.secrets() == agent.secrets() and wrapped.model() == agent.model()
