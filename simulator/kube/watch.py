"""One watch stream of the fake API: filtering, selector transitions, bookmarks and timeouts.

Events are pushed synchronously by the store as writes commit, so every watcher sees them in
resourceVersion order and the delivery order is deterministic. Timers use the loop clock.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from haptic.k8s.api import JSON

from .selectors import Matcher

Item = tuple[str, JSON]


class Watch:
    """An async iterator of ``(type, object)``; objects belong to the store and must not be mutated."""

    def __init__(
        self,
        kind: str,
        api_version: str,
        namespace: str | None,
        matcher: Matcher | None,
        current_rv: Callable[[], int],
        on_close: Callable[[Watch], None],
        bookmark_interval: float | None,
        timeout: float | None,
    ) -> None:
        self.kind = kind
        self.api_version = api_version
        self.namespace = namespace
        self.matcher = matcher
        self._current_rv = current_rv
        self._on_close = on_close
        self._queue: deque[Item] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self.closed = False
        self.dropped = False
        self._bookmark_interval = bookmark_interval
        self._timeout_timer: asyncio.TimerHandle | None = None
        self._bookmark_timer: asyncio.TimerHandle | None = None
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # created outside a loop (synchronous use): no timers
            self._loop = None
        if self._loop is not None:
            if timeout is not None:
                self._timeout_timer = self._loop.call_later(timeout, self.close)
            if bookmark_interval:
                self._bookmark_timer = self._loop.call_later(bookmark_interval, self._bookmark)

    # -- producer side (the store) ---------------------------------------------------------------

    def push(self, etype: str, obj: JSON) -> None:
        if self.closed:
            return
        self._queue.append((etype, obj))
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def offer(self, etype: str, obj: JSON, old: JSON | None) -> None:
        """A committed change; pushes it when it concerns this watch (selector transitions included)."""
        if self.namespace is not None and obj["metadata"].get("namespace") != self.namespace:
            return
        match = self.matcher
        if match is None:
            self.push(etype, obj)
            return
        now = match(obj)
        if etype == "MODIFIED":
            was = old is not None and match(old)
            if now:
                self.push("MODIFIED" if was else "ADDED", obj)
            elif was:
                self.push("DELETED", obj)
        elif etype == "ADDED":
            if now:
                self.push(etype, obj)
        elif now or (old is not None and match(old)):
            self.push(etype, obj)

    def bookmark(self, annotations: dict[str, str] | None = None) -> None:
        metadata: dict[str, Any] = {"resourceVersion": str(self._current_rv())}
        if annotations:
            metadata["annotations"] = annotations
        self.push("BOOKMARK", {"kind": self.kind, "apiVersion": self.api_version, "metadata": metadata})

    def _bookmark(self) -> None:
        if self.closed or self._loop is None or not self._bookmark_interval:
            return
        self.bookmark()
        self._bookmark_timer = self._loop.call_later(self._bookmark_interval, self._bookmark)

    def close(self, dropped: bool = False) -> None:
        """Ends the stream. A dropped stream loses what it had not delivered yet, like a cut connection."""
        if self.closed:
            return
        self.closed = True
        self.dropped = dropped
        if dropped:
            self._queue.clear()
        for timer in (self._timeout_timer, self._bookmark_timer):
            if timer is not None:
                timer.cancel()
        self._on_close(self)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- consumer side -----------------------------------------------------------------------------

    def __aiter__(self) -> Watch:
        return self

    async def _wait(self) -> None:
        while not self._queue and not self.closed:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    async def __anext__(self) -> Item:
        if not self._queue:
            await self._wait()
            if not self._queue:
                raise StopAsyncIteration
        return self._queue.popleft()

    async def next_batch(self, limit: int = 1000) -> list[Item]:
        """Everything pending (at least one item), or an empty list once the stream has ended."""
        if not self._queue:
            await self._wait()
        batch: list[Item] = []
        while self._queue and len(batch) < limit:
            batch.append(self._queue.popleft())
        return batch

    def drain(self) -> list[Item]:
        """Everything pending now, without waiting (for synchronous use)."""
        items = list(self._queue)
        self._queue.clear()
        return items

    def pending(self) -> int:
        return len(self._queue)
