"""The fake Dataplane API's HTTP server: sockets behave like the real (Go) server's."""

from __future__ import annotations

import socket

import httpx

from simulator.dataplane.http_server import serve
from simulator.dataplane.instance import FakeDataplane, InstanceOptions


async def test_connections_do_not_wait_for_delayed_acks() -> None:
    """Go's net/http sets TCP_NODELAY on every connection. Without it, each answer written in two
    pieces waited for the client's delayed ACK (40 ms per request on Linux: a runtime-only deployment
    of a few requests per pod looked like 300 ms of controller latency on the local tier). Accepted
    connections inherit the option from the listening socket, which is what can be checked here."""
    running = await serve(FakeDataplane(InstanceOptions(username="admin", password="secret")))
    try:
        listeners = [s for server in running.server.servers for s in server.sockets]
        assert listeners
        assert all(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in listeners)
        async with httpx.AsyncClient(base_url=running.url, auth=("admin", "secret")) as client:
            response = await client.get("/v3/services/haproxy/configuration/version")
        assert response.status_code == 200
    finally:
        await running.stop()
