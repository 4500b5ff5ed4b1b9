"""convy's HTTP/1.1 transport under httpx (decision 59), against real servers on asyncio's sockets:
what it reads (by length, chunked, to the end, streamed), the connection it keeps, and httpx's own
exceptions for each way a server can fail."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from convy.play.kept import KeptTransport
from convy.play.keptclient import KeptClient

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Served:
    """A server on a free local port answering each connection with `handler`; counts connections."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.url = ""

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def request_of(reader: asyncio.StreamReader) -> bytes:
    """One request's head and its body (by Content-Length or chunked)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lower = head.lower()
    if b"content-length:" in lower:
        length = int(lower.split(b"content-length:")[1].split(b"\r\n")[0])
        return head + await reader.readexactly(length)
    if b"transfer-encoding: chunked" in lower:
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            part = await reader.readexactly(size + 2)
            if size == 0:
                return head + body
            body += part[:-2]
    return head


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while True:
        asked = await request_of(reader)
        body = asked.split(b"\r\n\r\n", 1)[1]
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        await writer.drain()


async def chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await request_of(reader)
    writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    for part in (b"data: one\n\n", b"data: two\n\n"):
        writer.write(b"%x\r\n%s\r\n" % (len(part), part))
        await writer.drain()
        await asyncio.sleep(0.01)
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    await echo(reader, writer)


async def to_the_end(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await request_of(reader)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it")
    await writer.drain()


async def hangs_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await request_of(reader)


async def half_an_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await request_of(reader)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
    await writer.drain()


async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await request_of(reader)
    await asyncio.sleep(5)


async def not_http(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await request_of(reader)
    writer.write(b"SSH-2.0-OpenSSH\r\n\r\n")
    await writer.drain()


async def once_then_closes(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await request_of(reader)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    await writer.drain()


def run(
    handler: Handler, use: Callable[[httpx.AsyncClient, str], Awaitable[object]]
) -> tuple[object, Served]:
    served = Served(handler)

    async def main() -> object:
        server = await asyncio.start_server(served.serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            async with httpx.AsyncClient(transport=KeptTransport(False, keep=2), timeout=0.5) as client:
                return await use(client, f"http://127.0.0.1:{port}/v1/chat")
        finally:
            server.close()

    return asyncio.run(main()), served


def test_one_connection_is_kept_for_every_request_in_turn() -> None:
    async def use(client: httpx.AsyncClient, url: str) -> object:
        return [(await client.post(url, content=f"n{n}".encode())).text for n in range(5)]

    said, served = run(echo, use)
    assert said == ["n0", "n1", "n2", "n3", "n4"]
    assert served.connections == 1


def test_a_body_without_a_length_is_sent_chunked() -> None:
    async def parts() -> AsyncIterator[bytes]:
        yield b"first "
        yield b"second"

    async def use(client: httpx.AsyncClient, url: str) -> object:
        return (await client.post(url, content=parts())).text

    said, _ = run(echo, use)
    assert said == "first second"


def test_a_chunked_answer_streams_and_the_connection_serves_again() -> None:
    async def use(client: httpx.AsyncClient, url: str) -> object:
        async with client.stream("POST", url, content=b"{}") as response:
            parts = [part async for part in response.aiter_text()]
        again = await client.post(url, content=b"again")
        return "".join(parts), again.text

    (streamed, again), served = run(chunked, use)
    assert streamed == "data: one\n\ndata: two\n\n"
    assert again == "again"
    assert served.connections == 1


def test_an_answer_without_length_is_read_to_the_end_and_its_connection_not_kept() -> None:
    async def use(client: httpx.AsyncClient, url: str) -> object:
        return [(await client.post(url, content=b"x")).text for _ in range(2)]

    said, served = run(to_the_end, use)
    assert said == ["all of it", "all of it"]
    assert served.connections == 2


def test_a_connection_the_server_closed_while_idle_is_not_used_again() -> None:
    async def use(client: httpx.AsyncClient, url: str) -> object:
        first = await client.post(url, content=b"x")
        await asyncio.sleep(0.05)
        second = await client.post(url, content=b"x")
        return first.text, second.text

    said, served = run(once_then_closes, use)
    assert said == ("ok", "ok")
    assert served.connections == 2


@pytest.mark.parametrize(
    ("handler", "error"),
    [
        (hangs_up, httpx.RemoteProtocolError),
        (half_an_answer, httpx.RemoteProtocolError),
        (silent, httpx.ReadTimeout),
        (not_http, httpx.RemoteProtocolError),
    ],
)
def test_a_failing_server_raises_httpx_own_exception(handler: Handler, error: type[Exception]) -> None:
    async def use(client: httpx.AsyncClient, url: str) -> object:
        with pytest.raises(error):
            await (await client.post(url, content=b"x")).aread()
        return True

    assert run(handler, use)[0] is True


def test_a_refused_connection_is_a_connect_error_that_says_refused() -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]

    async def main() -> str:
        async with httpx.AsyncClient(transport=KeptTransport(False)) as client:
            with pytest.raises(httpx.ConnectError) as raised:
                await client.post(f"http://127.0.0.1:{port}/", content=b"x")
        return str(raised.value)

    assert "refused" in asyncio.run(main()).lower()


def test_an_unknown_host_is_a_connect_error() -> None:
    async def main() -> None:
        async with httpx.AsyncClient(transport=KeptTransport(False)) as client:
            with pytest.raises(httpx.ConnectError):
                await client.get("http://no-such-host.invalid/")

    asyncio.run(main())


async def sets_a_cookie(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while True:
        asked = (await request_of(reader)).lower()
        said = b"sent" if b"cookie: session=abc" in asked else b"none"
        writer.write(
            b"HTTP/1.1 200 OK\r\nSet-Cookie: session=abc; Path=/\r\nContent-Length: 4\r\n\r\n%s" % said
            if b"/login" in asked.split(b"\r\n")[0]
            else b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n%s" % said
        )
        await writer.drain()


def test_a_cookie_set_by_an_answer_is_sent_back_until_the_jar_is_cleared() -> None:
    async def main() -> list[str]:
        served = Served(sets_a_cookie)
        server = await asyncio.start_server(served.serve, "127.0.0.1", 0)
        base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        try:
            async with KeptClient(transport=KeptTransport(False)) as client:
                said = [(await client.get(f"{base}/page")).text, (await client.get(f"{base}/login")).text]
                said.append((await client.get(f"{base}/page")).text)
                client.cookies.clear()
                said.append((await client.get(f"{base}/page")).text)
                return said
        finally:
            server.close()

    assert asyncio.run(main()) == ["none", "none", "sent", "none"]


async def speaks_while_idle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await request_of(reader)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    await writer.drain()
    await asyncio.sleep(0.02)
    writer.write(b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n")
    await writer.drain()
    await asyncio.sleep(1)


def test_a_kept_connection_the_server_spoke_on_while_idle_is_not_used_again() -> None:
    async def use(client: httpx.AsyncClient, url: str) -> object:
        first = await client.post(url, content=b"x")
        await asyncio.sleep(0.1)
        second = await client.post(url, content=b"x")
        return first.status_code, second.status_code

    said, served = run(speaks_while_idle, use)
    assert said == (200, 200)
    assert served.connections == 2
