"""A project turned into what a run plays: its agent (a declarative HTTP agent, or its Python
agent), the agent's build to wait for, and the simulated user's and judge's models, every problem
found before any request."""

from __future__ import annotations

import json
import re

import httpx
import msgspec
import yaml

from convy.errors import ConfigurationError
from convy.play.agent import Agent, PythonAgent
from convy.play.inline import Inline
from convy.play.model import Models, OpenAiModel
from convy.play.template import Path as JsonPath
from convy.play.version import AgentVersion
from convy.play.wire.agent import JsonAgent
from convy.play.wire.spec import AgentSpec, HeaderName, Shown
from convy.project.choices import Choices
from convy.project.document import LOADER, TAB, Declaration, Lines, YamlTab
from convy.project.project import Project, PythonFile
from convy.project.settings import Settings


class AgentFileError(msgspec.Struct, frozen=True):
    """A mistake in the agent file `where` (its `text`), said at the line of the key it is about."""

    where: str
    text: str

    def located(self, error: msgspec.ValidationError) -> ConfigurationError:
        """msgspec's error (`... - at `$.session.start``, its own check naming the key first in
        backticks) as a ConfigurationError at `file:line`."""
        said, _, at = str(error).partition(" - at `")
        path = at.removesuffix("`") or "$"
        said = Choices(AgentSpec, path).said(said)
        unknown = re.fullmatch(r"Object contains unknown field `([^`]*)`", said)
        named = re.match(r"`([A-Za-z_-]+)`", said)
        if unknown is not None:
            path = f"{path}.{unknown.group(1)}"
            said = f"unknown key `{unknown.group(1)}`"
        elif named is not None:
            path = f"{path}.{named.group(1)}"
        try:
            root = yaml.compose(self.text, Loader=LOADER)
        except yaml.YAMLError:
            root = None
        if root is None:
            return ConfigurationError(self.where, said)
        shown = path.removeprefix("$").removeprefix(".")
        if shown and named is None and unknown is None:
            said = f"{said} (at `{shown}`)"
        return ConfigurationError(f"{self.where}:{Lines(root).line(path)}", said)


class Assembly(msgspec.Struct, frozen=True):
    """What `project` plays with, made from its files and settings."""

    project: Project

    @property
    def settings(self) -> Settings:
        return self.project.settings

    def agent(self) -> Agent:
        """The agent, every ${VAR} resolved and every file checked."""
        project = self.project
        spec = self.declared()
        if spec is None:
            file = PythonFile(project.agent_files()[project.agent_name()], project.root)
            made = getattr(file.module(), "agent", None)
            if made is None or not callable(getattr(made, "conversation", None)):
                where = str(file.path.relative_to(file.root))
                raise ConfigurationError(
                    where, "must define `agent`, an object with a conversation(key) method"
                )
            return PythonAgent(made.conversation)
        return JsonAgent(
            spec,
            self.settings.turn_timeout,
            spec.verify(project.root),
            traced=self.settings.trace_context,
            answer_setting=self.answer_setting(),
        )

    def answer_setting(self) -> str:
        """Where the declarative agent's answer path is set, as a wrong path's message names it."""
        project = self.project
        if self.settings.agent_answer or self.settings.agent_url:
            return "agent-answer"
        path = project.agent_files()[project.agent_name()]
        return f"the agent file's `answer` ({path.relative_to(project.root)})"

    def declared(self) -> AgentSpec | None:
        """The declarative agent (agent-url or agents/<name>.yaml) resolved; None for a Python agent."""
        project = self.project
        name = project.agent_name()
        if self.settings.agent_url:
            return self.inline_spec().resolved(project.environ, "agent-url")
        path = project.agent_files()[name]
        where = str(path.relative_to(project.root))
        if path.suffix == ".py":
            return None
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            spec = msgspec.convert(data, AgentSpec)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            line = f":{mark.line + 1}" if mark is not None else ""
            tabbed = YamlTab(path.read_text(encoding="utf-8")).met(error)
            raise ConfigurationError(f"{where}{line}", TAB if tabbed else "is not valid YAML") from None
        except msgspec.ValidationError as error:
            raise AgentFileError(where, path.read_text(encoding="utf-8")).located(error) from None
        except RecursionError:
            raise ConfigurationError(where, "is nested too deeply to be an agent file") from None
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigurationError(where, f"cannot be read: {error}") from None
        lines = path.read_text(encoding="utf-8").splitlines()
        for name in spec.headers:
            if not HeaderName(name).valid():
                found = next((n for n, text in enumerate(lines, start=1) if name in text), 0)
                raise ConfigurationError(f"{where}:{found}" if found else where, HeaderName(name).problem())
        return self.overridden(spec).resolved(project.environ, where)

    def overridden(self, spec: AgentSpec) -> AgentSpec:
        """An agent file with what the agent-* settings given without agent-url say over it
        (agent-answer, agent-body, agent-model): `--demo --agent-answer reply.message` plays the
        demo's agent reading a wrong path."""
        given = self.given()
        fields: dict[str, object] = {key: given[key] for key in ("answer", "body") if key in given}
        if "model" in given and not spec.model:
            fields["model"] = given["model"]
        if not fields:
            return spec
        try:
            return msgspec.convert({**msgspec.to_builtins(spec), **fields}, AgentSpec)
        except msgspec.ValidationError as error:
            raise ConfigurationError(", ".join(f"agent-{key}" for key in fields), str(error)) from None

    def given(self) -> dict[str, object]:
        """What the agent-* settings say of the agent, by the agent file's keys (`body` parsed from
        agent-body's JSON), those given only: the one place they become part of an agent."""
        settings = self.settings
        fields: dict[str, object] = {}
        if settings.agent_body:
            try:
                fields["body"] = json.loads(settings.agent_body)
            except ValueError:
                raise ConfigurationError("agent-body", "is not valid JSON") from None
        if settings.agent_answer:
            fields["answer"] = settings.agent_answer
        if settings.agent_protocol:
            fields["protocol"] = settings.agent_protocol
        if settings.agent_stream != "none":
            fields["stream"] = settings.agent_stream
        if settings.agent_model:
            fields["model"] = settings.agent_model
        return fields

    def version(self) -> AgentVersion | None:
        """agent-version-url with the agent's headers and TLS; None when it is not set."""
        settings = self.settings
        if not settings.agent_version_url:
            if settings.expect_agent_version:
                raise ConfigurationError("expect-agent-version", "needs agent-version-url to ask")
            return None
        url = settings.agent_version_url
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL:
            raise ConfigurationError("agent-version-url", "is not a valid URL") from None
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise ConfigurationError("agent-version-url", "must be an http:// or https:// address")
        if settings.agent_version_path:
            try:
                JsonPath(settings.agent_version_path)
            except ValueError as error:
                raise ConfigurationError("agent-version-path", str(error)) from None
        spec = self.declared()
        headers = dict(spec.headers) if spec is not None else {}
        https = spec is not None and url.startswith("https://")
        verify = spec.tls.context(self.project.root) if spec is not None and https else True
        return AgentVersion(
            url=url,
            path=settings.agent_version_path,
            expect=settings.expect_agent_version,
            wait=settings.agent_version_wait,
            headers=headers,
            verify=verify if url.startswith("https://") else False,
        )

    def inline_spec(self) -> AgentSpec:
        """The agent that agent-url, agent-body, agent-answer and agent-headers define."""
        headers: dict[str, str] = {}
        if self.settings.agent_headers.strip().startswith(("{", "[")):
            raise ConfigurationError(
                "agent-headers",
                "looks like JSON: write one `Name: value` per line instead, such as "
                "`Authorization: Bearer ${{ secrets.AGENT_TOKEN }}`",
            )
        for number, line in enumerate(self.settings.agent_headers.splitlines(), start=1):
            if not line.strip():
                continue
            name, colon, value = line.partition(":")
            if not colon or not name.strip():
                raise ConfigurationError("agent-headers", f"line {number} is not `Name: value`")
            if not HeaderName(name.strip()).valid():
                raise ConfigurationError("agent-headers", f"line {number}: {HeaderName(name).problem()}")
            headers[name.strip()] = value.strip()
        fields: dict[str, object] = {"url": self.settings.agent_url, "headers": headers, **self.given()}
        try:
            return msgspec.convert(fields, AgentSpec)
        except msgspec.ValidationError as error:
            raise ConfigurationError("agent-url", str(error)) from None

    def check_models(self, declarations: tuple[Declaration, ...] | None = None) -> None:
        """ConfigurationError before any request when the models would be asked without a key at the
        default model-url (the demo and models.py set their own). Scenarios that ask no model
        (scripts without a brief, checks without claims) need no key."""
        if (self.project.root / "models.py").exists():
            return
        self.check_judge_key()
        if declarations is not None and not any(
            d.scenario.simulated or d.scenario.claims for d in declarations
        ):
            return
        default = Settings().model_url
        if self.settings.model_url.rstrip("/") == default and not self.settings.model_key:
            raise ConfigurationError(
                "model-key",
                f"is empty while model-url is the default {default}: set model-key (a secret, e.g. "
                "`${{ secrets.OPENAI_API_KEY }}`), or point model-url at a server that needs none",
            )

    def check_judge_key(self) -> None:
        """ConfigurationError before any request when judge-url points at another host than
        model-url and judge-key is empty: model-key is never sent to another provider's host; and
        when a panel member's key variable is not set (each member's key is its own)."""
        settings = self.settings
        settings.panel().keys()
        if not settings.judge_url or settings.judge_key or not settings.model_key:
            return
        try:
            judge, model = httpx.URL(settings.judge_url), httpx.URL(settings.model_url)
        except httpx.InvalidURL:
            raise ConfigurationError("judge-url", "is not a valid URL") from None
        if (judge.scheme, judge.host, judge.port) != (model.scheme, model.host, model.port):
            raise ConfigurationError(
                "judge-key",
                f"is empty while judge-url ({Shown(settings.judge_url).text}) is on another host than "
                "model-url: set judge-key, so that model-key is never sent to another provider",
            )

    def models(
        self, client: httpx.AsyncClient, declarations: tuple[Declaration, ...] | None = None
    ) -> Models:
        """The simulated user's and the judge's models: models.py, else OpenAI-compatible settings
        (the judge at judge-url with judge-key when given, else at model-url with model-key). A
        model no scenario of `declarations` asks (scripts without a brief, checks without claims)
        needs no name. With `system-role: inline`, each gets its system text at the start of its
        first user message."""
        made = self.declared_models(client, declarations)
        if self.settings.system_role == "inline":
            return Models(
                user=Inline(made.user),
                judge=Inline(made.judge),
                panel=tuple(Inline(member) for member in made.panel),
                later=tuple(Inline(model) for model in made.later),
            )
        return made

    def declared_models(
        self, client: httpx.AsyncClient, declarations: tuple[Declaration, ...] | None = None
    ) -> Models:
        file = self.project.root / "models.py"
        if file.exists():
            given = self.project.sources.models()
            if given:
                raise ConfigurationError("models.py", f"and {', '.join(given)} both define models: keep one")
            made = getattr(PythonFile(file, self.project.root).module(), "models", None)
            if not isinstance(made, Models):
                raise ConfigurationError(
                    "models.py", "must define `models = convy.Models(user=..., judge=...)`"
                )
            return made
        scenarios = [d.scenario for d in declarations] if declarations is not None else None
        talks = scenarios is None or any(scenario.simulated for scenario in scenarios)
        judges = scenarios is None or any(scenario.claims for scenario in scenarios)
        if not self.settings.user_model and (talks or (judges and not self.settings.judge_model)):
            raise ConfigurationError("user-model", "is not set: name the simulated user's model")
        settings = self.settings
        url = settings.model_url.rstrip("/")
        user = OpenAiModel(
            url=url,
            key=settings.model_key,
            name=settings.user_model,
            client=client,
            max_tokens=settings.user_max_tokens,
        )
        judge = OpenAiModel(
            url=(settings.judge_url or settings.model_url).rstrip("/"),
            key=settings.judge_key or settings.model_key,
            name=settings.judge_model or settings.user_model,
            client=client,
            max_tokens=settings.judge_max_tokens,
            temperature=0.0,
            setting="judge-url" if settings.judge_url else "model-url",
        )
        panel = settings.panel()
        members = tuple(
            OpenAiModel(
                url=member.url.rstrip("/"),
                key=key,
                name=member.model,
                client=client,
                max_tokens=settings.judge_max_tokens,
                temperature=0.0,
                setting=f"judge-panel's member `{member.model}` (its url)",
            )
            for member, key in zip(panel.members, panel.keys(), strict=True)
        )
        warm = settings.vote_temperature
        later = tuple(msgspec.structs.replace(model, temperature=warm) for model in (judge, *members))
        return Models(user=user, judge=judge, panel=members, later=later)
