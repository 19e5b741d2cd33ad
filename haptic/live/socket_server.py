"""One uvicorn server on a socket this process binds itself: start, port, stop.

Shared by the debug server and the webhook server. The controller owns signal handling, so uvicorn
never installs its own handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator

import uvicorn


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def listening_socket(host: str, port: int) -> socket.socket:
    """A non-blocking TCP listening socket for a uvicorn server (port 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on accepted sockets whose proto says TCP
    # (with proto 0, small answers waited ~40 ms for delayed ACKs).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


class ListenError(OSError):
    """A server cannot listen where it was told to (the port is taken, the address is not local)."""


class SocketServer:
    """Serves a uvicorn ``Config`` on ``host:port`` until ``stop()``."""

    def __init__(self, name: str, host: str, port: int) -> None:
        self.name = name
        self.host = host
        self._requested_port = port
        self._socket: socket.socket | None = None
        self._server: _QuietServer | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        if self._socket is None:
            raise RuntimeError(f"{self.name} is not started")
        return int(self._socket.getsockname()[1])

    @property
    def started(self) -> bool:
        return self._task is not None

    async def start(self, config: uvicorn.Config) -> None:
        """Binds, serves ``config`` and returns once uvicorn accepts connections."""
        if self._task is not None:
            raise RuntimeError(f"{self.name} already started")
        try:
            sock = self._socket = listening_socket(self.host, self._requested_port)
        except OSError as exc:
            raise ListenError(exc.errno, f"{self.name} cannot listen on {self.host}:{self._requested_port}: "
                                         f"{exc.strerror or exc}") from exc
        server = self._server = _QuietServer(config)
        task = self._task = asyncio.create_task(server.serve(sockets=[sock]), name=self.name)
        while not server.started:
            if task.done():
                await task
                raise RuntimeError(f"{self.name} stopped while starting")
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
        self._task = None
        self._server = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None
