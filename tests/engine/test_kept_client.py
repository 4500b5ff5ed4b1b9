"""httpx's client as convy uses it (decisions 59 and 60): the request it builds in one step is the
one httpx's own client builds — the same method, URL, headers in the same order and casing, body
and timeout — whatever headers are given and whatever the client holds; what it cannot build so
(a query, cookies, a relative URL, a body that is not bytes) goes httpx's own way."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from convy.play.kept import KeptTransport
from convy.play.keptclient import KeptClient

URL = httpx.URL("http://127.0.0.1:8080/v1/chat/completions")
BODY = b'{"model": "bench", "messages": []}'


def built(client: httpx.AsyncClient, url: httpx.URL | str, **given: Any) -> tuple[object, ...]:
    request = client.build_request("POST", url, **given)
    return (
        request.method,
        str(request.url),
        request.headers.raw,
        request.read(),
        request.extensions,
    )


def clients(**settings: Any) -> tuple[KeptClient, httpx.AsyncClient]:
    return KeptClient(transport=KeptTransport(False), **settings), httpx.AsyncClient(**settings)


@pytest.mark.parametrize(
    "headers",
    [
        None,
        {"Content-Type": "application/json", "Accept": "application/json"},
        {"accept": "text/event-stream", "USER-AGENT": "agent-tester/1", "X-Trace": "a"},
        httpx.Headers([("X-Same", "1"), ("x-same", "2"), ("Authorization", "Bearer k")]),
        [("Connection", "close"), ("Accept-Encoding", "identity")],
    ],
)
@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"headers": {"X-Client": "c", "Accept": "*/*; q=0.5"}},
        {"timeout": httpx.Timeout(7.0, connect=2.0)},
    ],
)
def test_a_request_is_built_as_httpx_builds_it(headers: Any, settings: dict[str, Any]) -> None:
    ours, theirs = clients(**settings)
    mine = built(ours, URL, content=BODY, headers=headers)
    assert mine == built(theirs, URL, content=BODY, headers=headers)


@pytest.mark.parametrize(
    ("settings", "url", "given"),
    [
        ({"cookies": {"session": "s1"}}, URL, {"content": BODY}),
        ({"params": {"api-version": "1"}}, URL, {"content": BODY}),
        ({}, URL, {"content": BODY, "params": {"q": "1"}}),
        ({}, str(URL), {"content": BODY}),
        ({"base_url": "http://127.0.0.1:8080/v1/"}, httpx.URL("chat/completions"), {"content": BODY}),
        ({}, URL, {"json": {"model": "bench"}}),
        ({}, URL, {"content": BODY, "timeout": 3.0}),
        ({}, URL, {"content": BODY, "extensions": {"timeout": {"read": 1.0}}}),
    ],
)
def test_what_one_step_cannot_build_goes_httpx_own_way(
    settings: dict[str, Any], url: httpx.URL | str, given: dict[str, Any]
) -> None:
    ours, theirs = clients(**settings)
    assert built(ours, url, **given) == built(theirs, url, **given)


def test_a_header_value_httpx_cannot_send_fails_as_httpx_fails() -> None:
    ours, theirs = clients()
    with pytest.raises(UnicodeEncodeError):
        built(theirs, URL, content=BODY, headers={"X-Name": "Zoë"})
    with pytest.raises(UnicodeEncodeError):
        built(ours, URL, content=BODY, headers={"X-Name": "Zoë"})
