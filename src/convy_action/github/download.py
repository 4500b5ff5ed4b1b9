"""A bounded download from storage: a GET whose body goes into a file, asked without any token,
tried again as the retries allow, never more than a given size, the file removed when it fails.
How each failure is told is the caller's: the REST API's words, or the results service's."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import httpx
import msgspec

from convy_action.github.retries import Retries, Transient
from convy_action.github.zipped import CHUNK

AGENT = "convy-action"
"""The User-Agent of every request of the action to GitHub and its storage."""


class Failures(Protocol):
    """How a download's failures are told, by the service it came from."""

    def refused(self, answer: httpx.Response, where: str) -> Exception:
        """The storage at `where` answered something other than 200 (`answer`, read)."""
        ...

    def too_big(self, declared: str, most: int) -> Exception:
        """The body is, or says it is (`declared`, "" when it did not say), more than `most` bytes."""
        ...

    def unanswered(self, where: str, error: httpx.TransportError) -> Exception:
        """No answer came from `where`."""
        ...


class Download(msgspec.Struct, frozen=True):
    """Downloads through `client`, tried again as `retries` allow, their failures told by `failures`."""

    client: httpx.Client
    retries: Retries
    failures: Failures

    def fetched(self, url: str, to: Path, most: int) -> int:
        """The body at `url` written to the file `to`: its size; over `most` bytes is a failure."""
        where = str(httpx.URL(url).copy_with(query=None, fragment=None))
        failures = self.failures

        def attempt() -> int:
            try:
                with self.client.stream(
                    "GET", url, headers={"User-Agent": AGENT}, follow_redirects=False
                ) as answer:
                    if answer.status_code != 200:
                        answer.read()
                        refused = failures.refused(answer, where)
                        raise self.retries.verdict(answer, refused, server_errors=True)
                    declared = answer.headers.get("content-length", "")
                    if declared.isdigit() and int(declared) > most:
                        raise failures.too_big(declared, most)
                    size = 0
                    with to.open("wb") as sink:
                        for chunk in answer.iter_bytes(CHUNK):
                            size += len(chunk)
                            if size > most:
                                raise failures.too_big("", most)
                            sink.write(chunk)
                    return size
            except httpx.TransportError as error:
                raise Transient(failures.unanswered(where, error)) from None

        try:
            return self.retries.call(attempt)
        except BaseException:
            to.unlink(missing_ok=True)
            raise
