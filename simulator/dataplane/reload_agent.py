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
        self.running: str | None = None
        # One reload at a time, as the real agent's single ticker: a reload requested while another
        # runs stays pending (and keeps coalescing) until its turn.
        self._turn = asyncio.Lock()
        self._timer: asyncio.Task[None] | None = None  # the pending reload's timer
        self._tasks: list[asyncio.Task[None]] = []
        self.records: dict[str, ReloadRecord] = {}
        self.last_succeeded: str | None = None

    def request(self) -> str:
        if self.pending is not None:
            return self.pending
        self._counter += 1
        self.pending = f"{self._day()}-{self._counter}"
        task = asyncio.get_running_loop().create_task(self._fire_later())
        self._timer = task
        self._tasks.append(task)
        task.add_done_callback(self._tasks.remove)
        return self.pending

    async def _fire_later(self) -> None:
        await asyncio.sleep(self.delay)
        await self.fire()

    async def fire(self) -> None:
        """Runs the pending reload now (the timer calls this; so may a forced reload)."""
        async with self._turn:
            reload_id = self.pending
            if reload_id is None:
                return
            self.pending, self.running = None, reload_id
            try:
                error = await self._run()
            finally:
                self.running = None
            record = ReloadRecord(reload_id, "failed" if error else "succeeded", error or "", self._wall())
            self.records[reload_id] = record
            if error is None:
                self.last_succeeded = reload_id

    async def flush(self) -> None:
        """Fires a pending reload immediately (``force_reload``)."""
        timer, self._timer = self._timer, None
        if timer is not None and not timer.done() and self.running is None:
            timer.cancel()
        await self.fire()

    def status(self, reload_id: str) -> ReloadRecord | None:
        if reload_id in (self.pending, self.running):
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
        for reload_id in (self.running, self.pending):
            if reload_id is not None:
                out.append(ReloadRecord(reload_id, "in_progress").as_json())
        return out

    def reset(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        self._timer = None
        self.pending = None
        self.running = None
        self.records.clear()
        self.last_succeeded = None

    async def aclose(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._timer = None
