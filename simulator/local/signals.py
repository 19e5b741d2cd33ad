"""SIGINT/SIGTERM for commands that own child processes (controller subprocesses, haproxy masters).

The children run in their own sessions (a terminal's Ctrl-C must reach only the orchestrator, which
stops them deliberately), so nothing stops them but the orchestrator's own cleanup. Python's default
SIGTERM ends the process at once, skipping that cleanup; ``run_interruptible`` turns the first
SIGINT or SIGTERM into a cancellation of the main task instead, so every ``finally`` (the stack's
``stop``) runs, and then raises ``Interrupted``. Later signals change nothing: cleanup is bounded by
the controller's own grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal, after its cleanup ran; ``exit_code`` is ``128 + signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


async def run_interruptible(main: Callable[[], Awaitable[T]]) -> T:
    """Awaits ``main()``; the first SIGINT/SIGTERM cancels it and raises ``Interrupted`` once it unwound."""
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    received: list[int] = []

    def interrupt(signum: int) -> None:
        if not received:
            received.append(signum)
            task.cancel()

    installed = []
    for sig in SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread, or no signals here
            loop.add_signal_handler(sig, interrupt, sig)
            installed.append(sig)
    try:
        return await main()
    except asyncio.CancelledError:
        if received:
            raise Interrupted(received[0]) from None
        raise
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
