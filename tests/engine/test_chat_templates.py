"""Every request convy sends to a model renders under public chat templates of popular open models,
with nothing dropped (docs/models.md). The templates are in tests/data/chat_templates (see SOURCES.md
there); they are rendered as transformers' `apply_chat_template` renders them (and vLLM, TGI and
llama.cpp's `--jinja` mimic it): a sandboxed, immutable jinja2 environment with `trim_blocks`,
`lstrip_blocks` and loop controls, `raise_exception`, `strftime_now`, a `tojson` that keeps
non-ASCII text, the special tokens, and `add_generation_prompt`."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any, NoReturn

import jinja2
import jinja2.ext
import jinja2.sandbox
import pytest

from convy.fakes import FakeModel
from convy.play.agent import Message
from convy.play.dialog import ChatJudge, SimulatedUser
from convy.play.inline import Inline
from convy.play.outcome import Turn
from convy.project.scenario import Claim, Graded, Scenario

FOLDER = Path(__file__).resolve().parent.parent / "data" / "chat_templates"
TEMPLATES = sorted(FOLDER.glob("*.jinja"))

NO_SYSTEM_ROLE = {"google-gemma-2-2b-it", "mistralai-Mistral-7B-Instruct-v0.1"}
"""Templates that refuse a system message: models that can only play with `system-role: inline`."""

BRIEF = "You are Dana. Order 4411 (headphones) has not arrived after two weeks. You want a refund."
CLAIMS: tuple[Claim, ...] = (
    "The agent asks for the order number or uses the one given.",
    Graded(
        claim="How clearly did the agent explain what happens next?", grades={"clear": True, "vague": False}
    ),
)
TURNS = (
    Turn(
        user="Hi, my headphones never arrived.",
        agent="Sorry to hear that! What is your order number?",
        seconds=1,
    ),
    Turn(
        user="It's 4411.", agent="Thanks. I have issued a refund of 59 €;\nit arrives in 3 days.", seconds=1
    ),
    Turn(user="Great, thanks.", agent="Anything else I can help with?", seconds=1),
)


def scenario(opening: str) -> Scenario:
    return Scenario(name="refund", user=BRIEF, opening=opening, claims=CLAIMS)


def requests() -> dict[str, tuple[Message, ...]]:
    """Every shape of request convy sends, by name."""
    user = SimulatedUser(FakeModel(), scenario(opening=""))
    opened = SimulatedUser(FakeModel(), scenario(opening=TURNS[0].user))
    judge = ChatJudge(FakeModel())
    asked = judge.messages(CLAIMS, TURNS)
    return {
        "user-first-message": user.messages(()),
        "user-after-one-turn": user.messages(TURNS[:1]),
        "user-after-the-opening": opened.messages(TURNS[:1]),
        "user-after-three-turns": opened.messages(TURNS),
        "judge": asked,
        "judge-with-no-turns": judge.messages(CLAIMS, ()),
        "judge-asked-again": judge.again(
            CLAIMS, asked, '{"decisions": []}', "it gave 0 decisions for 2 claims"
        ),
    }


class Rendering:
    """A chat template rendered as transformers' apply_chat_template does (a `tool_use` template,
    which servers pick only when a request has tools, with an empty list of tools)."""

    def __init__(self, path: Path) -> None:
        self.tools: list[object] | None = [] if path.stem.endswith("tool_use") else None
        environment = jinja2.sandbox.ImmutableSandboxedEnvironment(
            trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
        )
        environment.filters["tojson"] = self.tojson
        environment.globals["raise_exception"] = self.raise_exception
        environment.globals["strftime_now"] = self.strftime_now
        self.template = environment.from_string(path.read_text(encoding="utf-8"))

    def raise_exception(self, message: str) -> NoReturn:
        raise jinja2.exceptions.TemplateError(message)

    def strftime_now(self, format: str) -> str:
        return datetime.datetime.now().strftime(format)

    def tojson(
        self,
        value: Any,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: Any = None,
        sort_keys: bool = False,
    ) -> str:
        return json.dumps(
            value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )

    def render(self, messages: tuple[Message, ...]) -> str:
        return self.template.render(
            messages=[{"role": m.role, "content": m.content} for m in messages],
            tools=self.tools,
            documents=None,
            add_generation_prompt=True,
            bos_token="<BOS>",
            eos_token="<EOS>",
        )


def test_the_templates_of_the_models_the_contract_names_are_here() -> None:
    names = {path.stem for path in TEMPLATES}
    for wanted in (
        "meta-llama-Llama-3.1-8B-Instruct",
        "meta-llama-Llama-3.3-70B-Instruct",
        "Qwen-Qwen2.5-7B-Instruct",
        "Qwen-Qwen3-0.6B",
        "google-gemma-2-2b-it",
        "google-gemma-3-it",
        "mistralai-Mistral-7B-Instruct-v0.3",
        "mistralai-Mistral-Nemo-Instruct-2407",
        "Mistral-Small-3.2-24B-Instruct-2506",
        "CohereForAI-c4ai-command-r-plus-tool_use",
        "microsoft-Phi-3.5-mini-instruct",
        "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B",
        "openai-gpt-oss-120b",
    ):
        assert wanted in names
    sources = (FOLDER / "SOURCES.md").read_text(encoding="utf-8")
    assert all(f"`{path.name}`" in sources for path in TEMPLATES), "every template's source is noted"


def shown(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("role", ["system", "inline"])
@pytest.mark.parametrize("shape", sorted(requests()))
@pytest.mark.parametrize("path", TEMPLATES, ids=[path.stem for path in TEMPLATES])
def test_every_request_renders_with_nothing_dropped(path: Path, shape: str, role: str) -> None:
    messages = requests()[shape]
    if role == "inline":
        messages = Inline(FakeModel()).messages(messages)
    elif path.stem in NO_SYSTEM_ROLE:
        with pytest.raises(jinja2.exceptions.TemplateError):
            Rendering(path).render(messages)
        return
    rendered = shown(Rendering(path).render(messages))
    for message in messages:
        for part in message.content.split("\n\n"):
            assert shown(part) in rendered, f"{message.role} message dropped or cut: {part[:60]!r}"


def test_every_request_alternates_after_the_system_message_and_ends_with_the_user() -> None:
    for name, messages in requests().items():
        roles = [m.role for m in messages]
        assert roles[0] == "system", name
        assert roles[1:] == ["user", "assistant"] * ((len(roles) - 2) // 2) + ["user"], name
        inline = [m.role for m in Inline(FakeModel()).messages(messages)]
        assert inline == roles[1:], name
