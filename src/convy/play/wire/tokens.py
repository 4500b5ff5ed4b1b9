"""Where an answer reports its tokens: paths into its JSON, each read as a whole count or unknown."""

from __future__ import annotations

from typing import Annotated

import msgspec

from convy.data import Declared
from convy.play.agent import Usage
from convy.play.template import Path, PathMissing


class TokenPaths(Declared, frozen=True, kw_only=True):
    """Where an answer reports its tokens: paths into the answer's JSON; "" when it does not."""

    input: str = ""
    output: str = ""

    def __post_init__(self) -> None:
        for text in (self.input, self.output):
            if text:
                Path(text)

    def usage(self, data: object) -> Usage | None:
        """The tokens the answer reported; a count it does not give is None (unknown), never 0."""
        usage = Usage(input=TokenCount(self.input).found(data), output=TokenCount(self.output).found(data))
        return None if usage.input is None and usage.output is None else usage


class TokenCount(msgspec.Struct, frozen=True):
    """A count of tokens at a path (or "", none) of an answer."""

    path: str

    def found(self, data: object) -> int | None:
        """The count, or None when the path is not set, not there, or not a whole number >= 0."""
        if not self.path:
            return None
        try:
            value = Path(self.path).found(data)
            count: int = msgspec.convert(value, Annotated[int, msgspec.Meta(ge=0)])
        except (PathMissing, msgspec.ValidationError):
            return None
        return count


OPENAI_TOKENS = TokenPaths(input="usage.prompt_tokens", output="usage.completion_tokens")
