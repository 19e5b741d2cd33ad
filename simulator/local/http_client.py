"""One HTTP/1.1 request exactly as a test means it: plain or TLS, any SNI, any ``Host``, the path as written.

A general-purpose client normalises what a traffic check wants to control (the path, the ``Host``
header, SNI derived from the URL) and hides what it wants to see (the certificate the server served).
This one opens a fresh connection per request (so HAProxy's balancing shows), sends the request line
and headers as given, reads the answer with ``h11`` and, over TLS, keeps the server's certificate
(DER) without verifying it: the check compares it with what it expects.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import h11


@dataclass(frozen=True)
class HttpAnswer:
    """What one request got: status, headers (names lower-cased, in order), body, and over TLS the
    certificate the server presented; ``error`` (and status 0) when there was no HTTP answer."""

    status: int = 0
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    certificate: bytes | None = None
    error: str = ""

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), or None."""
        wanted = name.lower()
        return next((value for key, value in self.headers if key == wanted), None)

    def header_values(self, name: str) -> list[str]:
        wanted = name.lower()
        return [value for key, value in self.headers if key == wanted]


@dataclass(frozen=True)
class HttpRequest:
    address: str  # host
    port: int
    host: str  # the Host header
    path: str = "/"
    method: str = "GET"
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    tls: bool = False
    sni: str | None = None  # TLS only; None sends no server name


def _client_context() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the check compares the certificate itself
    context.set_alpn_protocols(["http/1.1"])
    return context


def _request_headers(request: HttpRequest) -> list[tuple[str, str]]:
    headers = [("Host", request.host)]
    given = {name.lower() for name in request.headers}
    headers.extend((name, value) for name, value in request.headers.items() if name.lower() != "host")
    if (request.body or request.method.upper() in ("POST", "PUT", "PATCH")) and "content-length" not in given:
        headers.append(("Content-Length", str(len(request.body))))
    if "connection" not in given:
        headers.append(("Connection", "close"))
    return headers


async def send(request: HttpRequest, limit: float = 5.0) -> HttpAnswer:
    """Sends ``request`` on a new connection and reads the whole answer (at most ``limit`` seconds)."""
    try:
        async with asyncio.timeout(limit):
            return await _send(request)
    except TimeoutError:
        return HttpAnswer(error=f"no answer from {request.address}:{request.port} within {limit:g}s")
    except (OSError, ssl.SSLError, h11.ProtocolError) as exc:
        return HttpAnswer(error=f"{type(exc).__name__}: {exc}".strip())


async def _send(request: HttpRequest) -> HttpAnswer:
    context = _client_context() if request.tls else None
    reader, writer = await asyncio.open_connection(
        request.address, request.port, ssl=context,
        server_hostname=(request.sni or None) if request.tls else None)
    certificate: bytes | None = None
    try:
        if request.tls:
            ssl_object = writer.get_extra_info("ssl_object")
            certificate = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
        connection = h11.Connection(h11.CLIENT)
        data = connection.send(h11.Request(method=request.method.upper(), target=request.path,
                                           headers=_request_headers(request)))
        if request.body:
            data += connection.send(h11.Data(data=request.body))
        data += connection.send(h11.EndOfMessage())
        writer.write(data)
        await writer.drain()
        status, headers, body = await _read(connection, reader)
        return HttpAnswer(status, headers, body, certificate)
    finally:
        writer.close()
        with contextlib.suppress(OSError, ssl.SSLError):  # the server closed first; the answer is complete
            await writer.wait_closed()


async def _read(connection: h11.Connection,
                reader: asyncio.StreamReader) -> tuple[int, tuple[tuple[str, str], ...], bytes]:
    status = 0
    headers: Sequence[tuple[bytes, bytes]] = ()
    body = bytearray()
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            connection.receive_data(await reader.read(65536))
            continue
        if isinstance(event, h11.InformationalResponse):
            continue
        if isinstance(event, h11.Response):
            status, headers = event.status_code, event.headers
        elif isinstance(event, h11.Data):
            body.extend(event.data)
        elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            break
    decoded = tuple((name.decode("latin-1").lower(), value.decode("latin-1")) for name, value in headers)
    return status, decoded, bytes(body)
