"""Waiting for a slow stop with a progress line every few seconds, saying what is still running."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from haptic.core import Clock

T = TypeVar("T")

#: how often a stop that has not finished says what it still waits for (the original: 5 s)
PROGRESS_INTERVAL = 5.0


async def with_progress(work: Awaitable[T], clock: Clock, log: logging.Logger, what: str,
                        waiting_for: Callable[[], str], every: float = PROGRESS_INTERVAL) -> T:
    """Awaits ``work``; every ``every`` seconds it has not finished, logs ``what`` and ``waiting_for()``."""
    task = asyncio.ensure_future(work)
    start = clock.monotonic()
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=every)
            if done:
                return task.result()
            log.info("%s: still waiting after %.0fs for %s", what, clock.monotonic() - start,
                     waiting_for() or "the iteration to end")
    finally:
        if not task.done():
            task.cancel()
