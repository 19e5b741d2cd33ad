"""Task helpers that keep cancellation honest.

``cancel_and_wait(task)`` is the one way to stop a task and wait for its end. The usual idiom
``task.cancel(); with suppress(CancelledError): await task`` swallows *the caller's own*
cancellation when it arrives during that await (``await task`` raises ``CancelledError`` in both
cases): the caller then runs on as if nothing happened, and whoever cancelled it waits forever.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["cancel_and_wait"]


async def cancel_and_wait(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` and wait until it ended; re-raise if the *caller* was cancelled meanwhile.

    The task's own ``CancelledError`` (the expected outcome) is absorbed; an exception it ended with
    propagates. A cancellation of the calling task requested while waiting propagates too, even
    though the awaited task ended cancelled as well.
    """
    if task.done():
        return
    task.cancel()
    current = asyncio.current_task()
    requested_before = current.cancelling() if current is not None else 0
    try:
        await task
    except asyncio.CancelledError:
        if current is not None and current.cancelling() > requested_before:
            raise
