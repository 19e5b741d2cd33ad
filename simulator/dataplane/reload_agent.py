"""The fake's reload agent: coalesced reload IDs on the event loop's clock.

As the real agent: a reload requested while one is pending reuses its ID; the pending reload fires
``delay`` seconds later; IDs look like ``YYYY-MM-DD-N``; a finished ID reports ``succeeded`` or
``failed``, older IDs of the day count as ``succeeded``, unknown ones as missing (404).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

# Runs the reload; returns None on success or the failure text.
ReloadFn = Callable[[], Awaitable[str | None]]


@dataclass
class ReloadRecord:
    id: str
    status: str
    response: str = ""
    timestamp: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "response": self.response,
            "reload_timestamp": int(self.timestamp),
        }


class ReloadAgent:
    def __init__(self, run: ReloadFn, *, delay: float, day: Callable[[], str], wall: Callable[[], float]) -> None:
        self._run = run
        self.delay = delay
        self._day = day
        self._wall = wall
        self._counter = 0
        self.pending: str | None = None
        self._task: asyncio.Task[None] | None = None
        self.records: dict[str, ReloadRecord] = {}
        self.last_succeeded: str | None = None

    def request(self) -> str:
        if self.pending is not None:
            return self.pending
        self._counter += 1
        self.pending = f"{self._day()}-{self._counter}"
        self._task = asyncio.get_running_loop().create_task(self._fire_later())
        return self.pending

    async def _fire_later(self) -> None:
        await asyncio.sleep(self.delay)
        await self.fire()

    async def fire(self) -> None:
        """Runs the pending reload now (the timer calls this; so may a forced reload)."""
        reload_id = self.pending
        if reload_id is None:
            return
        self.pending = None
        error = await self._run()
        record = ReloadRecord(reload_id, "failed" if error else "succeeded", error or "", self._wall())
        self.records[reload_id] = record
        if error is None:
            self.last_succeeded = reload_id

    async def flush(self) -> None:
        """Fires a pending reload immediately (``force_reload``)."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
        await self.fire()

    def status(self, reload_id: str) -> ReloadRecord | None:
        if reload_id == self.pending:
            return ReloadRecord(reload_id, "in_progress")
        record = self.records.get(reload_id)
        if record is not None:
            return record
        day, _, number = reload_id.rpartition("-")
        if number.isdigit() and (day < self._day() or (day == self._day() and int(number) < self._counter)):
            return ReloadRecord(reload_id, "succeeded")
        return None

    def listing(self) -> list[dict[str, Any]]:
        out = [r.as_json() for r in self.records.values()]
        if self.pending is not None:
            out.append(ReloadRecord(self.pending, "in_progress").as_json())
        return out

    def reset(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None
        self.pending = None
        self.records.clear()
        self.last_succeeded = None

    async def aclose(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._task = None
