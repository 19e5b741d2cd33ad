"""``ServiceProxy``: one TCP address in front of several replicas, as a Service's cluster IP is.

The validating webhook of a cluster is registered once, for a Service, and the API server reaches
whichever replica is ready behind it. Each controller replica of a local stack serves its webhook on
its own port; the stack registers this proxy's address instead (``haptic run --webhook-url``) so that
admission keeps working while a replica is down or restarting. Connections are passed through as
bytes (TLS ends at the replica, so the API server still verifies the replica's certificate); each new
connection goes to the next target that accepts it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence

Target = tuple[str, int]


class ServiceProxy:
    def __init__(self, host: str, port: int, targets: Callable[[], Sequence[Target]]) -> None:
        self.host = host
        self.port = port
        self.targets = targets
        self._server: asyncio.Server | None = None
        self._next = 0
        self._pipes: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, self.host, self.port)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._pipes):
                task.cancel()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        targets = list(self.targets())
        for offset in range(len(targets)):
            host, port = targets[(self._next + offset) % len(targets)]
            try:
                streams = await asyncio.wait_for(asyncio.open_connection(host, port), 2.0)
            except (OSError, TimeoutError):
                continue  # that replica is down: the next one
            self._next = (self._next + offset + 1) % len(targets)
            return streams
        return None

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._pipes.add(task)
        try:
            upstream = await self._connect()
            if upstream is None:
                return  # nobody behind the Service: the caller sees the connection closed
            up_reader, up_writer = upstream
            try:
                await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
            finally:
                up_writer.close()
        finally:
            writer.close()
            if task is not None:
                self._pipes.discard(task)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            if writer.can_write_eof():
                writer.write_eof()
