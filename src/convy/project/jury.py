"""The judge's votes and its panel as the settings give them (`judge-votes`, `judge-panel`), read
and checked before any request; each member's key taken from the environment variable it names."""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit

import msgspec

from convy.data import Declared
from convy.errors import ConfigurationError
from convy.project.flowtext import FlowText


class Votes(msgspec.Struct, frozen=True):
    """The `judge-votes` setting: `count` calls of each judge per claim (odd), or `failing`: one
    call each, and two more each when some claim fails."""

    count: int = 1
    failing: bool = False

    @classmethod
    def read(cls, text: str, where: str = "judge-votes") -> Votes:
        """`1`, an odd number, or `failing`; ConfigurationError naming `where` for anything else."""
        word = text.strip().casefold()
        if word == "failing":
            return cls(failing=True)
        if word.isdigit() and int(word) % 2 == 1:
            return cls(int(word))
        raise ConfigurationError(
            where,
            "must be 1, an odd number of votes (3, 5…), or failing (two more votes where a claim fails)",
        )

    @property
    def text(self) -> str:
        return "failing" if self.failing else str(self.count)


ONE = Votes()
"""One call of each judge per claim: the default."""


class Member(Declared, frozen=True, kw_only=True):
    """A further judge of the panel: its model's name, its OpenAI-compatible base URL, and the name
    of the environment variable holding its API key ("": it takes none), never the key itself."""

    model: str
    url: str
    key: str = ""

    @property
    def origin(self) -> str:
        """Its URL's scheme, host and port: `https://api.anthropic.com`."""
        url = urlsplit(self.url)
        port = f":{url.port}" if url.port else ""
        return f"{url.scheme}://{url.hostname}{port}"

    def secret(self, environ: Mapping[str, str], where: str, number: int) -> str:
        """Its key, read from the variable it names; ConfigurationError naming the variable (never a
        value) when it is not set."""
        if not self.key:
            return ""
        value = environ.get(self.key, "")
        if not value:
            raise ConfigurationError(
                where,
                f"member {number} ({self.model}) takes its key from the environment variable {self.key},"
                " which is not set",
            )
        return value


class Panel(msgspec.Struct, frozen=True):
    """The judges that vote with the judge (empty: none)."""

    members: tuple[Member, ...] = ()

    @classmethod
    def read(cls, text: str, where: str = "judge-panel") -> Panel:
        """The setting's text — JSON, or YAML's flow style (`[{model: m, url: "https://…", key: VAR}]`)
        — read and checked: ConfigurationError naming `where` when it is not a list of `{model, url,
        key}` with http(s) URLs, or when the judge plus the panel would be an even number."""
        if not text.strip():
            return cls()
        raw = FlowText(text).value(where)
        try:
            members = msgspec.convert(raw, type=tuple[Member, ...])
        except msgspec.ValidationError as error:
            raise ConfigurationError(
                where, f"must be a list of {{model, url, key}} (key: the name of a variable): {error}"
            ) from None
        for number, member in enumerate(members, start=1):
            try:
                url = urlsplit(member.url)
                fits = url.scheme in ("http", "https") and bool(url.hostname) and (url.port or 0) >= 0
            except ValueError:
                fits = False
            if not fits:
                raise ConfigurationError(
                    where, f"member {number} ({member.model}): url must be an http(s) URL"
                )
        if len(members) % 2:
            raise ConfigurationError(
                where,
                f"the judge and its panel of {len(members)} are {len(members) + 1} judges: the majority "
                "needs an odd number, so add or remove a member",
            )
        return cls(members)

    def keys(self, environ: Mapping[str, str] = os.environ, where: str = "judge-panel") -> tuple[str, ...]:
        """Each member's key, in order; ConfigurationError naming a variable that is not set."""
        return tuple(member.secret(environ, where, n) for n, member in enumerate(self.members, start=1))

    @property
    def named(self) -> tuple[str, ...]:
        """Each member as `model@origin`, as the judge's fingerprint and run.json name them."""
        return tuple(f"{member.model}@{member.origin}" for member in self.members)
