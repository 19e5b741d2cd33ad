"""The echo backend behind real haproxy: it tells the protocol each server option makes haproxy speak (one port
for HTTP/1.1, h2c, TLS and h2 over TLS), holds answers back (server timeouts) and answers a chosen status."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from simulator.local.echo import CERTIFICATE_NAME, EchoServer
from simulator.local.http_client import HttpRequest, send
from simulator.scenario.traffic_checks import certificate_info

HAPROXY = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")
pytestmark = [pytest.mark.haproxy, pytest.mark.skipif(HAPROXY is None, reason="needs the haproxy binary")]

OPTIONS = {"h1": "", "h2c": " proto h2", "tls": " ssl verify none", "h2": " ssl verify none alpn h2"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _config(listen: int, echo: int) -> str:
    lines = ["defaults", "    mode http", "    timeout connect 2s", "    timeout client 10s", "    timeout server 10s",
             "frontend f", f"    bind 127.0.0.1:{listen}"]
    lines += [f"    use_backend b_{name} if {{ path_beg /{name}/ }}" for name in OPTIONS]
    lines += ["    use_backend b_slow if { path_beg /slow/ }", "    default_backend b_h1"]
    for name, option in OPTIONS.items():
        lines += [f"backend b_{name}", f"    server s 127.0.0.1:{echo}{option}"]
    lines += ["backend b_slow", "    timeout server 500ms", f"    server s 127.0.0.1:{echo}"]
    return "\n".join(lines) + "\n"


async def _wait_listening(port: int) -> None:
    deadline = time.monotonic() + 5
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)
            continue
        writer.close()
        return


async def test_each_server_option_is_reported_with_the_protocol_it_speaks(tmp_path: Path) -> None:
    echo = await EchoServer("e1").start()
    listen = _free_port()
    (tmp_path / "haproxy.cfg").write_text(_config(listen, echo.port))
    assert HAPROXY is not None
    process = await asyncio.create_subprocess_exec(HAPROXY, "-f", str(tmp_path / "haproxy.cfg"),
                                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        await _wait_listening(listen)
        seen = {}
        for name in OPTIONS:
            answer = await send(HttpRequest("127.0.0.1", listen, "shop.example", f"/{name}/x", method="POST",
                                            body=b"hi"))
            assert answer.status == 200, answer.error
            report = json.loads(answer.body)
            assert (report["path"], report["body"], report["host"]) == (f"/{name}/x", "hi", "shop.example")
            seen[name] = (answer.header("X-Echo-Protocol"), report["protocol"])
        assert seen == {"h1": ("http/1.1",) * 2, "h2c": ("h2c",) * 2, "tls": ("https",) * 2, "h2": ("h2",) * 2}
        slow = await send(HttpRequest("127.0.0.1", listen, "shop.example", "/slow/", headers={"X-Echo-Delay": "2"}))
        assert slow.status == 504 and slow.header("X-Echo-Server") is None
        prompt = await send(HttpRequest("127.0.0.1", listen, "shop.example", "/slow/", headers={"X-Echo-Delay": "0.1"}))
        assert prompt.status == 200
        failing = await send(HttpRequest("127.0.0.1", listen, "shop.example", "/h2c/",
                                         headers={"X-Echo-Status": "404"}))
        assert failing.status == 404 and failing.header("X-Echo-Server") == "e1"
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 5)
        await echo.stop()


async def test_a_tls_client_gets_the_echo_certificate_and_an_odd_status_is_ignored() -> None:
    echo = await EchoServer("e2").start()
    try:
        answer = await send(HttpRequest(echo.host, echo.port, "vault.example", "/", tls=True, sni="vault.example",
                                        headers={"X-Echo-Status": "999"}))
    finally:
        await echo.stop()
    assert answer.status == 200 and answer.header("X-Echo-Protocol") == "https"
    assert answer.certificate is not None and certificate_info(answer.certificate).subject == f"CN={CERTIFICATE_NAME}"
