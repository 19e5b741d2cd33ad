"""Helpers for the real-haproxy Dataplane tests: echo backends, free ports, driven fake instances."""

from __future__ import annotations

import asyncio
import socket
import ssl
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from cryptography import x509

from haptic.dataplane.client import DataplaneClient
from simulator.dataplane.haproxy_driver import HAProxyDriver
from simulator.dataplane.inprocess import client_for
from simulator.dataplane.instance import FakeDataplane, InstanceOptions
from simulator.dataplane.process_runner import ProcessRunner
from simulator.dataplane.storage import Storage


async def served_serial(port: int, server_hostname: str | None = None, attempts: int = 100) -> int:
    """The serial of the certificate haproxy serves on ``port`` (retried briefly while it binds)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    for _ in range(attempts):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context, server_hostname=server_hostname)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        writer.close()
        return int(x509.load_der_x509_certificate(der).serial_number)
    raise AssertionError(f"no TLS listener on port {port}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class EchoServer:
    """A real HTTP server on 127.0.0.1 answering every request with its own name."""

    name: str
    port: int = 0
    server: asyncio.Server | None = None
    hits: int = 0

    async def start(self) -> EchoServer:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            self.hits += 1
            body = self.name.encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


@dataclass
class DrivenInstance:
    """A fake Dataplane instance driving a real haproxy that listens on ``frontend_port``."""

    fake: FakeDataplane
    driver: HAProxyDriver
    storage: Storage
    frontend_port: int
    client: DataplaneClient = field(init=False)

    def __post_init__(self) -> None:
        self.client = client_for(self.fake)

    def map_path(self, name: str) -> str:
        return self.storage.path("maps", name)

    async def get(self, host: str = "default.local", attempts: int = 50) -> str:
        """GET / through haproxy; retried briefly while a new worker binds."""
        last: Exception | None = None
        async with httpx.AsyncClient(timeout=5.0) as http:
            for _ in range(attempts):
                try:
                    response = await http.get(f"http://127.0.0.1:{self.frontend_port}/", headers={"Host": host})
                    return f"{response.status_code} {response.text}"
                except httpx.TransportError as exc:
                    last = exc
                    await asyncio.sleep(0.05)
        raise AssertionError(f"haproxy on port {self.frontend_port} unreachable: {last!r}")

    async def close(self) -> None:
        await self.client.aclose()
        await self.fake.aclose()


async def start_instance(
    haproxy_bin: str, workdir: Path, runner: ProcessRunner, name: str, *, reload_delay: float = 0.05
) -> DrivenInstance:
    driver = HAProxyDriver(haproxy_bin, workdir / "haproxy", runner)
    storage = Storage(workdir / "storage")
    fake = FakeDataplane(InstanceOptions(name=name, reload_delay=reload_delay), driver=driver, storage=storage)
    await fake.start()
    return DrivenInstance(fake, driver, storage, free_port())


def render_config(
    instance: DrivenInstance, servers: dict[str, list[tuple[str, int]]], map_name: str = "host.map"
) -> str:
    """haproxy.cfg routing by Host through a map, one backend per entry of ``servers``."""
    lines = [
        "global",
        "    log stdout format raw local0",
        "",
        "defaults",
        "    mode http",
        "    timeout connect 2s",
        "    timeout client 10s",
        "    timeout server 10s",
        "",
        "frontend fe",
        f"    bind 127.0.0.1:{instance.frontend_port}",
        f"    use_backend %[req.hdr(host),lower,map({instance.map_path(map_name)},web)]",
        "    default_backend web",
    ]
    for backend, endpoints in servers.items():
        lines += ["", f"backend {backend}"]
        lines += [f"    server s{i} 127.0.0.1:{port}" for i, (_, port) in enumerate(endpoints, start=1)]
    return "\n".join(lines) + "\n"
