"""Echo backends: tiny real HTTP servers that answer every request with their own name and what they saw.

The answer is JSON (``{"server": name, "protocol": ..., "method": ..., "path": ..., "host": ...,
"headers": {...}, "body": ...}``: the request as haproxy forwarded it, header names lower-cased, a header
sent several times as a list, the body cut at 4 KiB) plus ``X-Echo-Server`` and ``X-Echo-Protocol``
headers, so a traffic check can tell which backend served a request, how haproxy spoke to it and what
reached it.

One port speaks every protocol haproxy's server options choose, told apart by the connection's first
bytes: a TLS ClientHello (``ssl``; the echo's own self-signed certificate, ALPN ``h2`` or
``http/1.1``), the HTTP/2 connection preface (``proto h2``: cleartext prior knowledge), else HTTP/1.1.
The protocol is reported as ``http/1.1``, ``h2c``, ``https`` (HTTP/1.1 over TLS) or ``h2`` (over TLS).
A request header ``X-Echo-Delay: <seconds>`` (at most 30) holds the answer back that long: how a
traffic check shows a server timeout (haproxy's 504) or holds connections open (connection limits);
``X-Echo-Status: <code>`` (200..599) answers with that status instead of 200 (an upstream's error answer).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import functools
import json
import socket
import ssl
from collections.abc import Iterable
from http import HTTPStatus

import h2.config
import h2.connection
import h2.events
import h2.exceptions

from simulator.kube.tls import serving_tls

#: the subject (and DNS SAN) of the certificate every echo server presents over TLS
CERTIFICATE_NAME = "haptic-echo"
DELAY_HEADER = "x-echo-delay"
STATUS_HEADER = "x-echo-status"
_MAX_DELAY = 30.0
_H2_PREFACE = b"PRI"
_TLS_HANDSHAKE = 0x16

Headers = dict[str, str | list[str]]


class EchoServer:
    """One server on ``host:port`` (port 0 picks one); counts the requests it served."""

    def __init__(self, name: str, host: str = "127.0.0.1", port: int = 0) -> None:
        self.name = name
        self.host = host
        self.port = port
        self.hits = 0
        self._socket: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._connections: set[asyncio.Task[None]] = set()

    def __repr__(self) -> str:
        return f"EchoServer({self.name!r}, {self.host}:{self.port}, hits={self.hits})"

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    async def start(self) -> EchoServer:
        sock = socket.create_server((self.host, self.port), backlog=128)
        sock.setblocking(False)
        self._socket = sock
        self.port = int(sock.getsockname()[1])
        self._accepting = asyncio.create_task(self._accept(sock), name=f"echo {self.name} accept")
        return self

    async def stop(self) -> None:
        tasks = [t for t in (self._accepting, *self._connections) if t is not None]
        for task in tasks:
            task.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 2)
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        self._accepting = None
        self._connections.clear()

    async def _accept(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            conn, _ = await loop.sock_accept(sock)
            task = asyncio.create_task(self._connection(conn), name=f"echo {self.name} connection")
            self._connections.add(task)
            task.add_done_callback(self._connections.discard)

    async def _connection(self, conn: socket.socket) -> None:
        try:
            first = await _peek(conn)
            tls = first[:1] == bytes([_TLS_HANDSHAKE])
            reader, writer = await _streams(conn, _tls_context() if tls else None)
        except (OSError, ssl.SSLError, TimeoutError):
            conn.close()
            return
        try:
            if tls:
                ssl_object = writer.get_extra_info("ssl_object")
                h2_over_tls = ssl_object is not None and ssl_object.selected_alpn_protocol() == "h2"
                await (self._serve_h2(reader, writer, "h2") if h2_over_tls else
                       self._serve_h1(reader, writer, "https"))
            elif first.startswith(_H2_PREFACE):
                await self._serve_h2(reader, writer, "h2c")
            else:
                await self._serve_h1(reader, writer, "http/1.1")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ssl.SSLError,
                ValueError, h2.exceptions.ProtocolError):
            pass
        finally:
            writer.close()

    def _answer(self, protocol: str, method: str, path: str, host: str, headers: Headers,
                received: bytes) -> bytes:
        self.hits += 1
        return json.dumps({"server": self.name, "protocol": protocol, "method": method, "path": path,
                           "host": host, "headers": headers,
                           "body": received[:_BODY_SHOWN].decode("utf-8", "replace")}).encode() + b"\n"

    async def _serve_h1(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, protocol: str) -> None:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            method, path, headers = _parse_head(head)
            length = int(_first(headers.get("content-length")) or 0)
            received = await reader.readexactly(length) if length else b""
            body = self._answer(protocol, method, path, _first(headers.get("host")), headers, received)
            await asyncio.sleep(_delay(headers))
            close = _first(headers.get("connection")).lower() == "close"
            status = _status(headers)
            writer.write(
                f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: application/json\r\n".encode()
                + f"X-Echo-Server: {self.name}\r\nX-Echo-Protocol: {protocol}\r\n".encode()
                + f"Content-Length: {len(body)}\r\n".encode()
                + (b"Connection: close\r\n" if close else b"")
                + b"\r\n" + body
            )
            await writer.drain()
            if close:
                return

    async def _serve_h2(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, protocol: str) -> None:
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        conn.initiate_connection()
        writer.write(conn.data_to_send())
        requests: dict[int, tuple[Headers, bytearray]] = {}
        answering: set[asyncio.Task[None]] = set()

        async def answer(stream: int, headers: Headers, received: bytes) -> None:
            pseudo = {k: _first(v) for k, v in headers.items() if k.startswith(":")}
            plain = {k: v for k, v in headers.items() if not k.startswith(":")}
            body = self._answer(protocol, pseudo.get(":method", ""), pseudo.get(":path", ""),
                                pseudo.get(":authority") or _first(plain.get("host")), plain, received)
            await asyncio.sleep(_delay(plain))
            with contextlib.suppress(h2.exceptions.ProtocolError):  # the stream was reset meanwhile
                conn.send_headers(stream, [(":status", str(_status(plain))), ("content-type", "application/json"),
                                           ("x-echo-server", self.name), ("x-echo-protocol", protocol),
                                           ("content-length", str(len(body)))])
                conn.send_data(stream, body, end_stream=True)
            writer.write(conn.data_to_send())

        try:
            while data := await reader.read(65536):
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        requests[event.stream_id] = (_header_dict(event.headers or []), bytearray())
                    elif isinstance(event, h2.events.DataReceived):
                        requests.get(event.stream_id, ({}, bytearray()))[1].extend(event.data or b"")
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id or 0)
                    elif isinstance(event, h2.events.StreamEnded) and event.stream_id in requests:
                        headers, received = requests.pop(event.stream_id)
                        task = asyncio.create_task(answer(event.stream_id, headers, bytes(received)))
                        answering.add(task)
                        task.add_done_callback(answering.discard)
                    elif isinstance(event, h2.events.ConnectionTerminated):
                        return
                writer.write(conn.data_to_send())
                await writer.drain()
        finally:
            for task in answering:
                task.cancel()


_BODY_SHOWN = 4096


async def _peek(conn: socket.socket, wanted: int = len(_H2_PREFACE), limit: float = 10.0) -> bytes:
    """The connection's first bytes, left in the socket for whoever reads it next (TLS or HTTP)."""
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(limit):
        while True:
            try:
                data = conn.recv(wanted, socket.MSG_PEEK)
            except BlockingIOError:
                data = None
            if data is not None:
                decided = not data or data[:1] == bytes([_TLS_HANDSHAKE]) or not _H2_PREFACE.startswith(data)
                if len(data) >= wanted or decided:
                    return data
                await asyncio.sleep(0.005)  # a partial preface stays readable: wait for the rest
                continue
            readable: asyncio.Future[None] = loop.create_future()
            loop.add_reader(conn.fileno(), _resolve, readable)
            try:
                await readable
            finally:
                loop.remove_reader(conn.fileno())


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _streams(conn: socket.socket, context: ssl.SSLContext | None) -> tuple[asyncio.StreamReader,
                                                                                 asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**16)
    protocol = asyncio.StreamReaderProtocol(reader)
    transport, _ = await loop.connect_accepted_socket(lambda: protocol, conn, ssl=context,
                                                      ssl_handshake_timeout=10 if context else None)
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


@functools.cache
@functools.cache
def _tls_context() -> ssl.SSLContext:
    """A server context with a self-signed certificate made once per process (haproxy's ``ssl verify none`` and
    a passthrough client both accept it; a check can tell it from the Ingress's certificate by its subject)."""
    context = serving_tls(datetime.datetime.now(datetime.UTC), CERTIFICATE_NAME, (CERTIFICATE_NAME,)).context
    context.set_alpn_protocols(["h2", "http/1.1"])
    return context


def _delay(headers: Headers) -> float:
    try:
        return min(max(float(_first(headers.get(DELAY_HEADER)) or 0), 0.0), _MAX_DELAY)
    except ValueError:
        return 0.0


def _status(headers: Headers) -> int:
    code = _first(headers.get(STATUS_HEADER))
    return int(code) if code.isdigit() and int(code) >= 200 and int(code) in _PHRASES else 200


_PHRASES = {status.value for status in HTTPStatus}


def _first(value: str | list[str] | None) -> str:
    if isinstance(value, list):
        return value[0]
    return value or ""


def _add(headers: Headers, key: str, text: str) -> None:
    known = headers.get(key)
    if known is None:
        headers[key] = text
    else:
        headers[key] = [*known, text] if isinstance(known, list) else [known, text]


def _header_dict(pairs: Iterable[tuple[str | bytes, str | bytes]]) -> Headers:
    headers: Headers = {}
    for name, value in pairs:
        _add(headers, _text(name).lower(), _text(value))
    return headers


def _text(value: str | bytes) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value


def _parse_head(head: bytes) -> tuple[str, str, Headers]:
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = [*lines[0].split(" ", 2), "", ""][:3]
    headers: Headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            _add(headers, name.strip().lower(), value.strip())
    return method, path, headers
