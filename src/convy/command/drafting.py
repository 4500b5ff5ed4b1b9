"""`convy draft`: scenarios drafted from recorded conversations (trace and log exports, chat logs,
run folders, a Phoenix project), one file each, what was written, left and masked printed; with
`--brief` a model (the usual settings: model-url, model-key, judge-model or user-model) drafts each
one's brief and claims."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Mapping
from pathlib import Path

import convy
from convy import Flags, Sources
from convy.command.console import Console
from convy.tools import Plural, Untrusted

EXIT_PASS = 0
MODEL = ("model-url", "model-key", "user-model", "judge-model", "model-timeout")
"""The settings `convy draft` takes as flags: the model `--brief` asks."""
MASKED = {
    "email": "e-mail address",
    "phone": "phone number",
    "card": "card number",
    "iban": "IBAN",
    "secret": "key",
}
"""What each kind of masked text is called in the count printed."""


class Drafting:
    """A draft asked for on the command line, with the command's `console` and `environ`."""

    def __init__(self, console: Console, environ: Mapping[str, str]) -> None:
        self._console = console
        self._environ = dict(environ)

    def exit_code(self, arguments: argparse.Namespace) -> int:
        here = Path.cwd()
        phoenix: tuple[convy.runs.PhoenixProject, ...] = ()
        if arguments.phoenix or arguments.project_name:
            if not arguments.phoenix or not arguments.project_name:
                raise convy.ConfigurationError(
                    "--phoenix", "needs --project NAME too (and --project needs --phoenix)"
                )
            phoenix = (
                convy.runs.PhoenixProject(
                    url=arguments.phoenix,
                    project=arguments.project_name,
                    key=self._environ.get("PHOENIX_API_KEY", ""),
                ),
            )
        drafting = convy.runs.Drafts(
            sources=tuple(
                convy.runs.Recording(path=here / given, shown=given) for given in arguments.sources
            ),
            phoenix=phoenix,
            to=here / arguments.to,
            here=here,
            claims=tuple(arguments.claim),
            briefed=arguments.brief,
            where=convy.runs.Kept.of(arguments.where),
            limit=arguments.limit,
            keep_pii=arguments.keep_pii,
        )
        drafting.checked()
        drafted = asyncio.run(self.drafted(drafting, arguments))
        self.show(drafted)
        return EXIT_PASS

    async def drafted(self, drafting: convy.runs.Drafts, arguments: argparse.Namespace) -> convy.runs.Drafted:
        if not drafting.briefed:
            return await drafting.done()
        import httpx

        settings = Sources(Flags(MODEL).given(arguments), self._environ, Path.cwd()).settings()
        name = settings.judge_model or settings.user_model
        if not name:
            raise convy.ConfigurationError("user-model", "is not set: --brief needs a model to draft with")
        async with httpx.AsyncClient(timeout=settings.model_timeout) as client:
            model = convy.OpenAiModel(
                url=settings.model_url.rstrip("/"), key=settings.model_key, name=name, client=client
            )
            return await drafting.done(model)

    def show(self, drafted: convy.runs.Drafted) -> None:
        out, err = self._console.out, self._console.err
        for warning in drafted.warnings:
            err.write(f"convy: warning: {Untrusted(text=warning).console(300)}\n")
        for file in drafted.written:
            out.write(f"convy: wrote {file}\n")
        for file in drafted.left:
            out.write(f"convy: left {file} as it is (it exists)\n")
        if drafted.masked:
            counts = ", ".join(
                Plural(count, MASKED[kind], "e-mail addresses" if kind == "email" else "").text()
                for kind, count in drafted.masked.items()
            )
            out.write(f"convy: masked {counts} (--keep-pii keeps them)\n")
        else:
            out.write("convy: masked nothing\n")
        out.write(
            f"convy: {Plural(drafted.read, 'conversation').text()} read, {drafted.kept} kept, "
            f"{len(drafted.written)} written, {len(drafted.left)} left\n"
        )
