"""Following log files (the pods' haproxy logs) and handing their new lines to a sink."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path


class LogFollower:
    """Polls ``path`` every ``interval`` seconds and calls ``sink(name, line)`` for each new line."""

    def __init__(self, name: str, path: Path, sink: Callable[[str, str], None], interval: float = 0.2) -> None:
        self.name = name
        self.path = path
        self.sink = sink
        self.interval = interval
        self._offset = 0
        self._partial = b""
        self._task: asyncio.Task[None] | None = None

    def start(self, *, from_end: bool = True) -> None:
        if from_end and self.path.exists():
            self._offset = self.path.stat().st_size
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self.poll()  # the last lines written before the stop

    async def _run(self) -> None:
        while True:
            self.poll()
            await asyncio.sleep(self.interval)

    def poll(self) -> None:
        try:
            with self.path.open("rb") as handle:
                handle.seek(self._offset)
                chunk = handle.read()
        except OSError:
            return
        if not chunk:
            return
        self._offset += len(chunk)
        data = self._partial + chunk
        *lines, self._partial = data.split(b"\n")
        for line in lines:
            self.sink(self.name, line.decode(errors="replace"))
