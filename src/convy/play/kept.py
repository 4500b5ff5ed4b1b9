"""HTTP/1.1 over kept connections, under httpx's API: convy's transport (decision 59).

httpx stays the client every part of convy uses (its requests, responses, headers, timeouts and
exceptions); under it, `KeptTransport` speaks HTTP/1.1 over asyncio's streams itself, with a
connection kept per server for the next request once an answer has been read whole. It costs a
fraction of httpx's own transport per request (httpcore's pool, h11's state machine and anyio's
cancel scopes) and imports nothing beyond the standard library.

Its errors are httpx's, as its own transport raises them: a connection that could not be made is
`httpx.ConnectError` (refused, a name not resolved, TLS failed) or `httpx.ConnectTimeout`; a server
that took too long `httpx.ReadTimeout` / `httpx.WriteTimeout`; a connection the server broke
`httpx.ReadError` / `httpx.WriteError`, or `httpx.RemoteProtocolError` when it hung up without an
answer or sent one that is not HTTP/1.1."""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import AsyncIterator

import httpx

HEAD_BYTES = 256 * 1024
"""The most a response's status line and headers may take (httpcore's h11 allows 100 kB)."""
PIECE = 64 * 1024
"""The most a body's part read at once holds."""
NO_BODY = frozenset((204, 304))


class Wire:
    """One HTTP/1.1 connection: asyncio's reader and writer, and whether it may serve another
    request once its answer has been read whole."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.reusable = True

    def idle_ok(self) -> bool:
        """Whether a kept connection can still serve: the server has not closed it, nor sent
        anything while no request was waiting (which only a server hanging up does)."""
        # asyncio keeps what arrived unread in the reader's buffer, with no public way to ask
        unread = getattr(self.reader, "_buffer", b"")
        return not (self.writer.is_closing() or self.reader.at_eof() or unread)

    def close(self) -> None:
        self.reusable = False
        self.writer.close()


class Idle:
    """The idle connections of one server (scheme, host, port), the most recently used last."""

    def __init__(self) -> None:
        self.idle: list[Wire] = []


class KeptTransport(httpx.AsyncBaseTransport):
    """httpx's transport for convy: HTTP/1.1 on asyncio's streams, at most `keep` idle connections
    kept per server (a request takes the one given back last, or opens a new one), TLS checked by
    `verify` (an SSL context made once; False for none). Closing it closes every idle connection
    and each lent one as its answer is closed."""

    def __init__(self, verify: ssl.SSLContext | bool = True, keep: int = 8) -> None:
        self._verify = verify
        self._keep = keep
        self._servers: dict[tuple[bytes, bytes, int], Idle] = {}
        self._closed = False

    def kept(self, url: httpx.URL) -> tuple[Idle, bytes, bytes, int]:
        scheme = url.raw_scheme
        host = url.raw_host
        port = url.port or (443 if scheme == b"https" else 80)
        key = (scheme, host, port)
        kept = self._servers.get(key)
        if kept is None:
            kept = self._servers[key] = Idle()
        return kept, scheme, host, port

    def tls(self) -> ssl.SSLContext:
        """The SSL context of its https connections, made when first needed (loading the system's
        CA bundle takes tens of milliseconds)."""
        if self._verify is True:
            self._verify = httpx.create_ssl_context()
        return self._verify or NO_CHECK.context()

    async def opened(self, scheme: bytes, host: bytes, port: int, timeout: float | None) -> Wire:
        """A new connection, or httpx.ConnectError / ConnectTimeout."""
        if scheme not in (b"http", b"https"):
            raise httpx.UnsupportedProtocol(f"no HTTP/1.1 for the scheme {scheme.decode()!r}")
        tls = self.tls() if scheme == b"https" else None
        name = host.decode("ascii")
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    name.strip("[]"),
                    port,
                    ssl=tls,
                    server_hostname=name.strip("[]") if tls is not None else None,
                    limit=HEAD_BYTES,
                )
        except TimeoutError:
            raise httpx.ConnectTimeout(f"no connection to {name}:{port} within {timeout} s") from None
        except ssl.SSLError as error:
            raise httpx.ConnectError(str(error) or type(error).__name__) from None
        except OSError as error:
            said = (
                f"[Errno {error.errno}] {os.strerror(error.errno)}" if error.errno and error.errno > 0 else ""
            )
            raise httpx.ConnectError(said or str(error) or type(error).__name__) from None
        return Wire(reader, writer)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._closed:
            raise RuntimeError("the transport is closed")
        timeouts = request.extensions.get("timeout", {})
        kept, scheme, host, port = self.kept(request.url)
        wire: Wire | None = None
        while kept.idle:
            candidate = kept.idle.pop()
            if candidate.idle_ok():
                wire = candidate
                break
            candidate.close()
        if wire is None:
            wire = await self.opened(scheme, host, port, timeouts.get("connect"))
        try:
            await Sending(wire, request, timeouts.get("write")).sent()
            return await Receiving(wire, request, timeouts.get("read"), self, kept).response()
        except BaseException:
            wire.close()
            raise

    def give(self, wire: Wire, kept: Idle) -> None:
        """A connection whose answer was read whole: kept for the next request, or closed."""
        if wire.reusable and not self._closed and len(kept.idle) < self._keep and wire.idle_ok():
            kept.idle.append(wire)
        else:
            wire.close()

    async def aclose(self) -> None:
        self._closed = True
        servers, self._servers = self._servers, {}
        for kept in servers.values():
            for wire in kept.idle:
                wire.close()


class NoCheck:
    """An SSL context that checks nothing (`verify=False` with an https URL), made when first needed."""

    def __init__(self) -> None:
        self._made: ssl.SSLContext | None = None

    def context(self) -> ssl.SSLContext:
        if self._made is None:
            made = ssl.create_default_context()
            made.check_hostname = False
            made.verify_mode = ssl.CERT_NONE
            self._made = made
        return self._made


NO_CHECK = NoCheck()


class Sending:
    """One request written on a connection: its line, its headers and its body (chunked when
    httpx gives no length)."""

    def __init__(self, wire: Wire, request: httpx.Request, timeout: float | None) -> None:
        self._wire = wire
        self._request = request
        self._timeout = timeout

    async def sent(self) -> None:
        request = self._request
        url = request.url
        target = url.raw_path
        lines = [request.method.encode("ascii"), b" ", target, b" HTTP/1.1\r\n"]
        chunked = False
        for name, value in request.headers.raw:
            lines += [name, b": ", value, b"\r\n"]
            if name.lower() == b"transfer-encoding" and value.lower() == b"chunked":
                chunked = True
        lines.append(b"\r\n")
        writer = self._wire.writer
        stream = request.stream
        if not isinstance(stream, httpx.AsyncByteStream):
            raise TypeError("an async transport was given a synchronous request body")
        if not chunked:
            # the head and the body in one write: one segment, one wake-up of the server
            lines += [part async for part in stream]
            writer.write(b"".join(lines))
        else:
            writer.write(b"".join(lines))
            async for part in stream:
                if part:
                    writer.write(b"%x\r\n%s\r\n" % (len(part), part))
            writer.write(b"0\r\n\r\n")
        if writer.transport.get_write_buffer_size() == 0:
            return
        try:
            async with asyncio.timeout(self._timeout):
                await writer.drain()
        except TimeoutError:
            raise httpx.WriteTimeout("the request could not be sent in time") from None
        except (OSError, ssl.SSLError) as error:
            raise httpx.WriteError(str(error) or type(error).__name__) from None


class Receiving:
    """One response read from a connection: its status line and headers now, its body as it is
    read (by length, chunked, or to the connection's end)."""

    def __init__(
        self, wire: Wire, request: httpx.Request, timeout: float | None, owner: KeptTransport, kept: Idle
    ) -> None:
        self._wire = wire
        self._request = request
        self._timeout = timeout
        self._owner = owner
        self._kept = kept

    async def head(self) -> bytes:
        try:
            async with asyncio.timeout(self._timeout):
                return await self._wire.reader.readuntil(b"\r\n\r\n")
        except TimeoutError:
            raise httpx.ReadTimeout("no answer in time") from None
        except asyncio.IncompleteReadError as error:
            if not error.partial:
                raise httpx.RemoteProtocolError("Server disconnected without sending a response.") from None
            raise httpx.RemoteProtocolError("the server hung up in the middle of its answer's head") from None
        except asyncio.LimitOverrunError:
            raise httpx.RemoteProtocolError("the answer's head is too long") from None
        except (OSError, ssl.SSLError) as error:
            raise httpx.ReadError(str(error) or type(error).__name__) from None

    async def response(self) -> httpx.Response:
        while True:
            head = await self.head()
            status, reason, headers = Head(head).parsed()
            if status >= 200 or status == 101:
                break
        wire = self._wire
        length = -1
        chunked = False
        closing = False
        for name, value in headers:
            lower = name.lower()
            if lower == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    raise httpx.RemoteProtocolError("the answer's Content-Length is not a number") from None
            elif lower == b"transfer-encoding":
                chunked = value.lower().endswith(b"chunked")
            elif lower == b"connection":
                closing = b"close" in value.lower()
        if closing:
            wire.reusable = False
        if self._request.method == "HEAD" or status in NO_BODY or 100 <= status < 200:
            length, chunked = 0, False
        if chunked:
            length = -1
        elif length < 0:
            wire.reusable = False
        body = Incoming(wire, length, chunked, self._timeout, self._owner, self._kept)
        if length == 0:
            body.done()
        return httpx.Response(
            status,
            headers=headers,
            stream=body,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": reason},
        )


class Head:
    """A response's status line and headers as they came."""

    def __init__(self, raw: bytes) -> None:
        self._raw = raw

    def parsed(self) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        lines = self._raw[:-4].split(b"\r\n")
        version, _, rest = lines[0].partition(b" ")
        code, _, reason = rest.partition(b" ")
        if not version.startswith(b"HTTP/1.") or len(code) != 3 or not code.isdigit():
            raise httpx.RemoteProtocolError("the answer is not HTTP/1.1")
        headers: list[tuple[bytes, bytes]] = []
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon or not name or name != name.strip():
                raise httpx.RemoteProtocolError("the answer has a malformed header line")
            headers.append((name, value.strip()))
        return int(code), reason, headers


class Incoming(httpx.AsyncByteStream):
    """A response's body as it is read: `length` bytes, chunked, or (length -1, not chunked) to the
    connection's end. Read whole, its connection goes back to the transport; closed before that, or
    broken, the connection is closed."""

    def __init__(
        self, wire: Wire, length: int, chunked: bool, timeout: float | None, owner: KeptTransport, kept: Idle
    ) -> None:
        self._wire = wire
        self._left = length
        self._chunked = chunked
        self._timeout = timeout
        self._owner = owner
        self._kept = kept
        self._finished = False
        self._given = False

    def done(self) -> None:
        self._finished = True
        self.give()

    def give(self) -> None:
        if not self._given:
            self._given = True
            if self._finished:
                self._owner.give(self._wire, self._kept)
            else:
                self._wire.close()

    async def read(self, *, line: bool = False, size: int = -1) -> bytes:
        reader = self._wire.reader
        try:
            async with asyncio.timeout(self._timeout):
                if line:
                    return await reader.readuntil(b"\r\n")
                if size >= 0:
                    return await reader.readexactly(size)
                return await reader.read(PIECE)
        except TimeoutError:
            raise httpx.ReadTimeout("the answer's body stopped (timed out)") from None
        except asyncio.IncompleteReadError:
            raise httpx.RemoteProtocolError("the server hung up in the middle of its answer") from None
        except asyncio.LimitOverrunError:
            raise httpx.RemoteProtocolError("a chunk's size line is too long") from None
        except (OSError, ssl.SSLError) as error:
            raise httpx.ReadError(str(error) or type(error).__name__) from None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._finished:
            return
        if self._chunked:
            async for part in self.chunks():
                yield part
        elif self._left >= 0:
            while self._left > 0:
                part = await self.read(size=min(self._left, PIECE))
                self._left -= len(part)
                if not self._left:
                    self.done()
                yield part
        else:
            while part := await self.read():
                yield part
            self._finished = True
            self._wire.close()
        self.done()

    async def chunks(self) -> AsyncIterator[bytes]:
        while True:
            line = await self.read(line=True)
            size_text = line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise httpx.RemoteProtocolError("a chunk's size is not a number") from None
            if size == 0:
                while await self.read(line=True) != b"\r\n":
                    pass  # trailers, not kept
                self.done()
                return
            part = await self.read(size=size + 2)
            yield part[:-2]

    async def aclose(self) -> None:
        self.give()
