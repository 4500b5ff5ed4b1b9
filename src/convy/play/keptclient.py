"""httpx's client as convy uses it over its own transport (decisions 59 and 60): a cookie jar read
only when an answer sets cookies, a request handed straight to the transport when nothing of the
client's own would act on it, and URLs given as text parsed once a process."""

from __future__ import annotations

import logging
import urllib.request
from collections.abc import Callable
from typing import Any

import httpx

from convy.play.kept import KeptTransport

LOGGED = logging.getLogger("httpx")
"""httpx's own logger: a request it would log (INFO) goes the client's whole way."""


class KeptClient(httpx.AsyncClient):
    """httpx's client over a KeptTransport, whose cookie jar (SetCookies) reads an answer's cookies
    only when it sets some (httpx hands every answer to the standard library's cookie jar through
    adapters of its own, about a third of its work per request), and which sends a request straight
    to its transport when none of its own steps would act on it (`send`)."""

    def __init__(self, *, transport: KeptTransport, **settings: Any) -> None:
        super().__init__(transport=transport, **settings)
        self._jar = SetCookies(settings.get("cookies"))
        self._kept = transport
        self._straight = settings.get("trust_env", True) is False or not urllib.request.getproxies()
        """No proxy in the environment: every URL goes to the transport given."""

    def build_request(
        self,
        method: str,
        url: httpx.URL | str,
        *,
        content: Any = None,
        data: Any = None,
        files: Any = None,
        json: Any = None,
        params: Any = None,
        headers: Any = None,
        cookies: Any = None,
        timeout: Any = httpx.USE_CLIENT_DEFAULT,
        extensions: Any = None,
    ) -> httpx.Request:
        """The request httpx's client builds, built in one step when it is as convy sends one — an
        absolute URL already parsed, a body of bytes, and no query, cookie, timeout or extension of
        its own or of the client's: the client's headers less those `headers` names again, then
        `headers` (as httpx merges them), and the client's timeout. httpx's own merging copies and
        searches its headers several times over, about a tenth of convy's CPU per request."""
        if not (
            isinstance(url, httpx.URL)
            and url.is_absolute_url
            and isinstance(content, bytes)
            and data is None
            and files is None
            and json is None
            and params is None
            and cookies is None
            and timeout is httpx.USE_CLIENT_DEFAULT
            and extensions is None
            and not self.params
            and not self.cookies
        ):
            return super().build_request(
                method,
                url,
                content=content,
                data=data,
                files=files,
                json=json,
                params=params,
                headers=headers,
                cookies=cookies,
                timeout=timeout,
                extensions=extensions,
            )
        given = httpx.Headers(headers).raw if not isinstance(headers, httpx.Headers) else headers.raw
        named = {name.lower() for name, _ in given}
        merged = [(name, value) for name, value in self.headers.raw if name.lower() not in named]
        merged += given
        return httpx.Request(
            method, url, content=content, headers=merged, extensions={"timeout": self.timeout.as_dict()}
        )

    async def send(
        self,
        request: httpx.Request,
        *,
        stream: bool = False,
        auth: Any = httpx.USE_CLIENT_DEFAULT,
        follow_redirects: Any = httpx.USE_CLIENT_DEFAULT,
    ) -> httpx.Response:
        """`request` sent as httpx's client sends it: its answer read whole unless `stream`, its
        cookies kept. When none of the client's own steps would act on it — no proxy in the
        environment, no auth (nor a user in the URL), no event hooks, redirects not followed, no
        log of httpx's shown — it goes straight to the transport, without the client's layers of
        auth, redirect and hook handling (about a fifth of convy's CPU per request); otherwise the
        client's whole way."""
        if not (
            self._straight
            and auth is httpx.USE_CLIENT_DEFAULT
            and follow_redirects is not True
            and not (follow_redirects is httpx.USE_CLIENT_DEFAULT and self.follow_redirects)
            and self.auth is None
            and not request.url.userinfo
            and not any(self.event_hooks.values())
            and not self.is_closed
            and not LOGGED.isEnabledFor(logging.INFO)
        ):
            return await super().send(request, stream=stream, auth=auth, follow_redirects=follow_redirects)
        request.extensions.setdefault("timeout", self.timeout.as_dict())
        response = await self._kept.handle_async_request(request)
        response.request = request
        try:
            self.cookies.extract_cookies(response)
            if not stream:
                await response.aread()
        except BaseException:
            await response.aclose()
            raise
        return response

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
        return self.kept(self._parsed, text, lambda: httpx.URL(text))

    def completions(self, base: str) -> httpx.URL:
        """A model's chat-completions endpoint: `{base}/chat/completions`, with the query of `base`;
        worked out once a base."""

        def made() -> httpx.URL:
            url = self.url(base)
            return url.copy_with(path=url.path.rstrip("/") + "/chat/completions")

        return self.kept(self._endpoints, base, made)

    def kept(self, table: dict[str, httpx.URL], key: str, make: Callable[[], httpx.URL]) -> httpx.URL:
        """`table`'s URL for `key`, made and kept when it has none (the oldest forgotten past `most`)."""
        found = table.get(key)
        if found is None:
            found = make()
            if len(table) >= self._most:
                del table[next(iter(table))]
            table[key] = found
        return found


ADDRESSES = Addresses()
"""The URLs this process sends to."""
