"""The traffic checks' HTTP client against real servers on loopback: exact requests, SNI, served certificates,
and the echo backend's report of what it received."""

from __future__ import annotations

import asyncio
import json
import ssl
import tempfile
from pathlib import Path

from cryptography import x509

from simulator.local.echo import EchoServer
from simulator.local.http_client import HttpRequest, send
from tests.support.certs import make_pem


def _context(pem: str, directory: Path, name: str) -> ssl.SSLContext:
    path = directory / f"{name}.pem"
    path.write_text(pem)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(path)
    return context


def _serial(der: bytes | None) -> int:
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


async def test_echo_reports_the_request_as_sent() -> None:
    echo = await EchoServer("10.1.0.1").start()
    try:
        answer = await send(HttpRequest(echo.host, echo.port, host="shop.example", path="/a/../b?x=1&y", method="POST",
                                        headers={"X-Trace": "t1", "Cookie": "k=v"}, body=b"hello"))
    finally:
        await echo.stop()
    assert answer.status == 200 and answer.header("X-Echo-Server") == "10.1.0.1"
    seen = json.loads(answer.body)
    assert seen["method"] == "POST" and seen["path"] == "/a/../b?x=1&y" and seen["host"] == "shop.example"
    assert seen["headers"]["x-trace"] == "t1" and seen["headers"]["cookie"] == "k=v"
    assert seen["headers"]["content-length"] == "5" and seen["body"] == "hello"


async def test_tls_sends_the_sni_and_keeps_the_served_certificate() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        default = _context(make_pem("default.example", 1), directory, "default")
        shop = _context(make_pem("shop.example", 2, sans=["shop.example"]), directory, "shop")

        def pick(sock: ssl.SSLObject, name: str | None, _ctx: ssl.SSLContext) -> None:
            if name == "shop.example":
                sock.context = shop

        default.sni_callback = pick  # type: ignore[assignment]

        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 204 No Content\r\nX-Served: yes\r\nConnection: close\r\n\r\n")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=default)
        port = server.sockets[0].getsockname()[1]
        try:
            by_sni = await send(HttpRequest("127.0.0.1", port, host="other.example", tls=True, sni="shop.example"))
            without = await send(HttpRequest("127.0.0.1", port, host="shop.example", tls=True, sni=None))
        finally:
            server.close()
            await server.wait_closed()
    assert by_sni.status == 204 and by_sni.header("x-served") == "yes"
    assert _serial(by_sni.certificate) == 2
    assert _serial(without.certificate) == 1


async def test_a_refused_connection_is_an_answer_with_an_error() -> None:
    echo = await EchoServer("x").start()
    port = echo.port
    await echo.stop()
    answer = await send(HttpRequest("127.0.0.1", port, host="a"))
    assert answer.status == 0 and "Connect" in answer.error
