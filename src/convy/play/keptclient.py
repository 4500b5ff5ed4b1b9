"""httpx's client as convy uses it over its own transport (decision 59): a cookie jar read only
when an answer sets cookies, and URLs given as text parsed once a process."""

from __future__ import annotations

from typing import Any

import httpx


class KeptClient(httpx.AsyncClient):
    """httpx's client, whose cookie jar (SetCookies) reads an answer's cookies only when it sets
    some: httpx hands every answer to the standard library's cookie jar through adapters of its
    own, about a third of its work per request."""

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        self._jar = SetCookies(settings.get("cookies"))

    @property
    def cookies(self) -> httpx.Cookies:
        return self._jar

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        self._jar = SetCookies(cookies)


class SetCookies(httpx.Cookies):
    """A cookie jar that reads an answer's cookies only when it has a Set-Cookie header."""

    def extract_cookies(self, response: httpx.Response) -> None:
        if any(name.lower() == b"set-cookie" for name, _ in response.headers.raw):
            super().extract_cookies(response)


class Addresses:
    """URLs given as text, each parsed once a process (httpx parses a URL given as text on every
    request, the largest part of its own work per request); at most `most` kept, the oldest
    forgotten first."""

    def __init__(self, most: int = 512) -> None:
        self._most = most
        self._parsed: dict[str, httpx.URL] = {}
        self._endpoints: dict[str, httpx.URL] = {}

    def url(self, text: str) -> httpx.URL:
        found = self._parsed.get(text)
        if found is None:
            found = httpx.URL(text)
            if len(self._parsed) >= self._most:
                del self._parsed[next(iter(self._parsed))]
            self._parsed[text] = found
        return found

    def completions(self, base: str) -> httpx.URL:
        """A model's chat-completions endpoint: `{base}/chat/completions`, with the query of `base`;
        worked out once a base."""
        found = self._endpoints.get(base)
        if found is None:
            url = self.url(base)
            found = url.copy_with(path=url.path.rstrip("/") + "/chat/completions")
            if len(self._endpoints) >= self._most:
                del self._endpoints[next(iter(self._endpoints))]
            self._endpoints[base] = found
        return found


ADDRESSES = Addresses()
"""The URLs this process sends to."""
