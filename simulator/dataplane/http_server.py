"""Serving fake Dataplane instances over HTTP on 127.0.0.1 (uvicorn, in the running loop)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from dataclasses import dataclass

import uvicorn

from simulator.dataplane.app import create_app
from simulator.dataplane.instance import FakeDataplane


@dataclass
class RunningServer:
    server: uvicorn.Server
    task: asyncio.Task[None]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def stop(self) -> None:
        self.server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(self.task, 5)


async def serve(fake: FakeDataplane, *, host: str = "127.0.0.1", port: int = 0) -> RunningServer:
    """Starts serving ``fake``; port 0 picks a free port (read it from the result)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # As Go's net/http (dataplaneapi) does for every connection: without it a response written in two
    # pieces (headers, body) waits for the client's delayed ACK, 40 ms per request on Linux. Accepted
    # sockets inherit the option from the listening one.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    config = uvicorn.Config(create_app(fake), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    return RunningServer(server, task, bound)
