"""`convy draft` as a use case: recorded conversations read from their sources, filtered
(`--where`, `--limit`), masked, and written one scenario file each into a folder, never over a file
that is there; what was written, left and warned about, and what was masked, handed back."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import msgspec
import yaml

from convy.draft.chatlog import ChatLog
from convy.draft.gathering import Gathering
from convy.draft.masking import KINDS, Masking
from convy.draft.otlp import JsonLines, OtlpFile
from convy.draft.phoenix import PhoenixProject
from convy.draft.recorded import Recorded
from convy.draft.runfolder import RunFolder
from convy.draft.written import Brief, Draft, Slug
from convy.errors import ConfigurationError
from convy.play.agent import Message
from convy.play.model import Model, ModelFailure, Schema

USED = " used "
"""How `taken` marks a name this draft gave (no scenario name has spaces around a word)."""

PEEK = 65536
"""How much of a file is looked at to tell a trace or log export from a chat log."""

BRIEFING = """You turn a recorded conversation between a user and a chat agent into a test scenario.
Write, in JSON, `user`: a short brief, in the second person, of who the user is and what they want
(so that someone else could play them), and `claims`: two to four short statements that should hold
of the agent's answers in a good conversation of this kind, each checkable by reading the dialogue.
Personal data in the conversation is masked as <email>, <phone> and the like: keep it masked."""

SHAPE = Schema(
    name="drafted_scenario",
    schema={
        "type": "object",
        "properties": {"user": {"type": "string"}, "claims": {"type": "array", "items": {"type": "string"}}},
        "required": ["user", "claims"],
        "additionalProperties": False,
    },
)


class Kept(msgspec.Struct, frozen=True):
    """`--where KEY=VALUE`, each given: a conversation is kept when every KEY has its VALUE."""

    pairs: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, given: Iterable[str]) -> Kept:
        pairs = []
        for text in given:
            key, equals, value = text.partition("=")
            if not equals or not key.strip():
                raise ConfigurationError("--where", f"{text!r} is not KEY=VALUE (e.g. feedback=negative)")
            pairs.append((key.strip(), value.strip()))
        return cls(tuple(pairs))

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.pairs)

    def keeps(self, recorded: Recorded) -> bool:
        return all(recorded.kept.get(key) == value for key, value in self.pairs)


class Recording(msgspec.Struct, frozen=True):
    """One SOURCE given on the command line: a trace or log file, a chat log or a run folder, as
    given (`shown`) and where it is."""

    path: Path
    shown: str

    def kind(self) -> str:
        """`run`, `otlp` or `chat`; ConfigurationError naming the source when it is none."""
        if self.path.is_dir():
            if (self.path / "attempts.jsonl").is_file():
                return "run"
            raise ConfigurationError(
                self.shown, "is a folder without attempts.jsonl: give a run folder or a file"
            )
        if not self.path.is_file():
            raise ConfigurationError(self.shown, "does not exist")
        with self.path.open("rb") as file:
            head = file.read(PEEK)
        if b'"resourceSpans"' in head or b'"resourceLogs"' in head:
            return "otlp"
        return "chat"


class Drafted(msgspec.Struct, frozen=True, kw_only=True):
    """What a draft did: the files written and those left because they were there (relative to
    the folder it ran in where they are inside it), the warnings (bad lines, a brief that failed),
    the conversations read and kept, and what was masked, by kind."""

    written: tuple[str, ...] = ()
    left: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    read: int = 0
    kept: int = 0
    masked: dict[str, int] = msgspec.field(default_factory=dict)


class Drafts(msgspec.Struct, frozen=True, kw_only=True):
    """A draft asked for: its sources (files and folders as given, and a Phoenix project), the
    folder the scenarios go to, each scenario's claims, the model that drafts a brief and claims
    (`briefed`; otherwise not asked), `--where`, `--limit` (0: all), whether personal data is kept,
    and the folder names are shown relative to (`here`)."""

    sources: tuple[Recording, ...] = ()
    phoenix: tuple[PhoenixProject, ...] = ()
    to: Path
    here: Path
    claims: tuple[str, ...] = ()
    briefed: bool = False
    where: Kept = Kept()
    limit: int = 0
    keep_pii: bool = False

    def checked(self) -> None:
        """ConfigurationError before anything is read when the draft cannot be made."""
        if not self.claims and not self.briefed:
            raise ConfigurationError(
                "--claim", "no claims: give --claim TEXT (one or more) or --brief (a model drafts them)"
            )
        if not self.sources and not self.phoenix:
            raise ConfigurationError(
                "SOURCE", "nothing to draft from: give a file, a run folder or --phoenix"
            )
        if any(not claim.strip() for claim in self.claims):
            raise ConfigurationError("--claim", "is empty")
        if self.limit < 0:
            raise ConfigurationError("--limit", "must be 1 or more")
        for source in self.sources:
            source.kind()

    def recorded(self, warnings: list[str]) -> Iterator[Recorded]:
        """Every conversation of every source, in the order of the sources."""
        gathering = Gathering(self.where.keys)
        gathered = False
        for source in self.sources:
            match source.kind():
                case "run":
                    yield from RunFolder(source.path, source.shown).conversations(warnings)
                case "chat":
                    yield from ChatLog(JsonLines(source.path, source.shown)).conversations(warnings)
                case _:
                    OtlpFile(source.path, source.shown).read(gathering, warnings)
                    gathered = True
        for project in self.phoenix:
            project.read(gathering, warnings)
            gathered = True
        if gathered:
            yield from gathering.conversations()

    def chosen(self, warnings: list[str]) -> tuple[int, list[Recorded]]:
        """(how many were read, those kept): with turns, `--where`, then the `--limit` latest, in
        the order read."""
        read = 0
        kept = []
        for recorded in self.recorded(warnings):
            read += 1
            if recorded.turns and self.where.keeps(recorded):
                kept.append(recorded)
        if self.limit:
            latest = sorted(range(len(kept)), key=lambda n: (kept[n].latest, n))[-self.limit :]
            kept = [kept[n] for n in sorted(latest)]
        return read, kept

    async def done(self, model: Model | None = None) -> Drafted:
        """The draft made: each kept conversation written as a scenario file into `to`, named
        uniquely across the scenarios already there; `model` drafts the brief and claims when
        `briefed` (ConfigurationError when it is asked for and not given)."""
        self.checked()
        if self.briefed and model is None:
            raise ConfigurationError(
                "--brief", "needs a model: set model-url and user-model (or judge-model)"
            )
        warnings: list[str] = []
        read, kept = self.chosen(warnings)
        masking = Masking(on=not self.keep_pii)
        taken = self.taken()
        written, left = [], []
        for recorded in kept:
            turns = tuple(masking.text(turn) for turn in recorded.turns)
            name = self.unique(Slug(turns[0]).name(), taken)
            file = self.to / f"{name}.yaml"
            taken[name] = file
            taken[f"{USED}{name}"] = file
            if file.exists():
                left.append(self.shown(file))
                continue
            brief = (
                await self.brief(model, recorded, masking, warnings)
                if self.briefed and model is not None
                else Brief()
            )
            if self.briefed and not brief.claims and not self.claims:
                warnings.append(f"{self.shown(file)}: not written: the model drafted no claims")
                continue
            draft = Draft(
                name=name,
                source=self.source(recorded, masking),
                turns=turns,
                claims=tuple(masking.text(claim) for claim in self.claims),
                brief=brief,
            )
            try:
                draft.scenario()
            except (msgspec.ValidationError, yaml.YAMLError) as error:
                warnings.append(f"{self.shown(file)}: not written: {error}")
                continue
            self.to.mkdir(parents=True, exist_ok=True)
            try:
                with file.open("x", encoding="utf-8") as out:
                    out.write(draft.text())
            except FileExistsError:
                left.append(self.shown(file))
                continue
            written.append(self.shown(file))
        return Drafted(
            written=tuple(written),
            left=tuple(left),
            warnings=tuple(warnings),
            read=read,
            kept=len(kept),
            masked={kind: masking.counts[kind] for kind in KINDS if masking.counts[kind]},
        )

    def shown(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.here.resolve()).as_posix()
        except ValueError:
            return str(path)

    def source(self, recorded: Recorded, masking: Masking) -> dict[str, str | int]:
        source: dict[str, str | int] = {}
        if recorded.run:
            source["run"] = recorded.run
        elif recorded.origin.startswith(("http://", "https://")):
            source["url"] = recorded.origin
        else:
            source["file"] = recorded.origin
        if recorded.trace:
            source["trace"] = recorded.trace
        if recorded.session:
            source["session"] = masking.text(recorded.session)
        source["index"] = recorded.index
        return source

    def taken(self) -> dict[str, Path]:
        """The names of the scenarios already in `to` and in the scenarios folder it is in (a
        name is unique across the whole tree), each with its file."""
        taken: dict[str, Path] = {}
        roots = {self.to}
        for folder in (self.to, *self.to.parents):
            if folder.name == "scenarios":
                roots.add(folder)
                break
        for root in roots:
            if not root.is_dir():
                continue
            for file in sorted([*root.rglob("*.yaml"), *root.rglob("*.yml")]):
                for name in self.declared(file):
                    taken.setdefault(name, file)
        return taken

    def declared(self, file: Path) -> list[str]:
        try:
            data = yaml.safe_load(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            return [file.stem]
        items = data if isinstance(data, list) else [data]
        names = [item.get("name") if isinstance(item, Mapping) else None for item in items]
        return [name if isinstance(name, str) and name else file.stem for name in names]

    def unique(self, name: str, taken: Mapping[str, Path]) -> str:
        """`name`, or `name-2`, `name-3`…: one no other scenario has (the file of that very name
        in `to` may be there: it is left, and named)."""
        candidate, number = name, 1
        while candidate in taken and (
            taken[candidate] != self.to / f"{candidate}.yaml" or candidate in self.used(taken)
        ):
            number += 1
            candidate = f"{name}-{number}"
        return candidate

    def used(self, taken: Mapping[str, Path]) -> set[str]:
        """The names this draft gave already (kept in `taken` under a prefix no name has)."""
        return {name.removeprefix(USED) for name in taken if name.startswith(USED)}

    async def brief(self, model: Model, recorded: Recorded, masking: Masking, warnings: list[str]) -> Brief:
        """The brief and claims the model drafts from the conversation (masked first); empty when
        the model failed or answered no such JSON (warned about)."""
        unseen = Masking(on=masking.on)
        dialogue = "\n".join(f"{message.role}: {unseen.text(message.text)}" for message in recorded.messages)
        messages = (Message(role="system", content=BRIEFING), Message(role="user", content=dialogue))
        try:
            reply = await model.reply(messages, SHAPE)
            data = json.loads(reply.text)
        except (ModelFailure, ValueError) as error:
            warnings.append(
                f"--brief: the model drafted nothing for {recorded.origin or recorded.run} "
                f"#{recorded.index}: {error}"
            )
            return Brief()
        if not isinstance(data, Mapping):
            return Brief()
        user = data.get("user")
        claims = data.get("claims")
        return Brief(
            user=masking.text(user.strip()) if isinstance(user, str) else "",
            claims=tuple(
                masking.text(claim.strip()) for claim in claims if isinstance(claim, str) and claim.strip()
            )
            if isinstance(claims, list)
            else (),
        )
