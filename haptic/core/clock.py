"""Time for the whole controller: one ``Clock`` object, injected everywhere.

Monotonic time is the running event loop's time (``loop.time()``); wall time is derived from it, so
that virtualizing the loop (the ``looptime`` library) virtualizes every timestamp, sleep, timer and
timeout at once. ``RealClock`` anchors wall time to the system clock once; ``VirtualClock`` anchors it
to a fixed epoch, so the same run always prints the same timestamps.

Example (virtual time, ten simulated minutes in milliseconds of real time)::

    clock = VirtualClock()

    async def main() -> None:
        await clock.sleep(600)
        assert clock.monotonic() == 600.0

    VirtualClock.run(main())
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from datetime import UTC, datetime
from typing import Any, TypeVar

_T = TypeVar("_T")

#: 2025-01-01T00:00:00Z: the wall time at virtual loop time 0, unless told otherwise.
DEFAULT_VIRTUAL_EPOCH = 1_735_689_600.0


class Clock:
    """Base clock: the loop's monotonic time plus sleeps, timers and timeouts on that loop.

    Subclasses only decide how wall time relates to monotonic time.
    """

    def monotonic(self) -> float:
        """Seconds on the running loop's clock (virtual under ``looptime``)."""
        return asyncio.get_running_loop().time()

    def wall(self) -> float:
        """Wall time in seconds since the Unix epoch, derived from ``monotonic()``."""
        raise NotImplementedError

    def now(self) -> datetime:
        """Wall time as an aware UTC datetime."""
        return datetime.fromtimestamp(self.wall(), UTC)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_later(delay, callback, *args)

    def call_at(self, when: float, callback: Callable[..., object], *args: Any) -> asyncio.TimerHandle:
        """Run ``callback`` at monotonic time ``when``."""
        return asyncio.get_running_loop().call_at(when, callback, *args)

    def timeout(self, delay: float | None) -> asyncio.Timeout:
        """``async with clock.timeout(5): ...`` raises ``TimeoutError`` after 5 s of loop time."""
        return asyncio.timeout(delay)

    def timer(self, callback: Callable[[], object]) -> Timer:
        """A restartable one-shot timer calling ``callback`` (see ``Timer``)."""
        return Timer(self, callback)

    async def ticks(self, interval: float) -> AsyncIterator[float]:
        """Yield the monotonic time every ``interval`` seconds, without drift.

        Ticks are due at ``start + k * interval``; a slow consumer skips missed ticks rather than
        bunching them up.
        """
        if interval <= 0:
            raise ValueError(f"tick interval must be positive, got {interval}")
        start = self.monotonic()
        k = 1
        while True:
            due = start + k * interval
            now = self.monotonic()
            if due > now:
                await asyncio.sleep(due - now)
            yield due
            now = self.monotonic()
            # The next tick not yet past: one due exactly now still fires (virtual time is exact).
            k = max(k + 1, math.ceil((now - start) / interval))


class RealClock(Clock):
    """The system's time: wall time is anchored to ``time.time()`` once per event loop."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._offset = 0.0

    def wall(self) -> float:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            # Deriving wall time from the loop keeps timestamps monotonic even if NTP steps the clock.
            self._loop = loop
            self._offset = time.time() - loop.time()
        return self._offset + loop.time()



def real_wall_time() -> float:
    """The system's wall time (epoch seconds) for code outside an event loop, e.g. a command-line tool."""

    async def read() -> float:
        return RealClock().wall()

    return asyncio.run(read())


class VirtualClock(Clock):
    """Deterministic time for tests and the simulator.

    Wall time is ``epoch + loop.time()``. The loop is expected to be a ``looptime`` loop starting at 0
    (``VirtualClock.run`` creates one; in pytest, mark the test ``@pytest.mark.looptime``): sleeps and
    timers then complete instantly in real time while firing at exact virtual times.
    """

    def __init__(self, epoch: float = DEFAULT_VIRTUAL_EPOCH) -> None:
        self.epoch = epoch

    def wall(self) -> float:
        return self.epoch + asyncio.get_running_loop().time()

    @staticmethod
    def new_loop(start: float = 0.0) -> asyncio.AbstractEventLoop:
        """A fresh event loop whose time is virtual and starts at ``start``."""
        import looptime

        return looptime.new_event_loop(start=start)

    @staticmethod
    def run(main: Coroutine[Any, Any, _T], start: float = 0.0) -> _T:
        """Run ``main`` to completion on a fresh virtual-time loop (like ``asyncio.run``)."""
        with asyncio.Runner(loop_factory=lambda: VirtualClock.new_loop(start)) as runner:
            return runner.run(main)

    @staticmethod
    def is_virtual() -> bool:
        """Whether the running loop's time is virtualized by ``looptime``."""
        import looptime

        loop = asyncio.get_running_loop()
        return isinstance(loop, looptime.LoopTimeEventLoop) and bool(loop.looptime_on)


class Timer:
    """A restartable one-shot timer on a clock.

    ``start(delay)`` arms it (re-arming an armed timer moves its deadline), ``cancel()`` disarms it.
    The callback runs on the loop, once per arming. Made for debounces, drift timers and retries.
    """

    def __init__(self, clock: Clock, callback: Callable[[], object]) -> None:
        self._clock = clock
        self._callback = callback
        self._handle: asyncio.TimerHandle | None = None

    def start(self, delay: float) -> None:
        self.cancel()
        self._handle = self._clock.call_later(delay, self._fire)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    @property
    def active(self) -> bool:
        return self._handle is not None

    @property
    def deadline(self) -> float | None:
        """Monotonic time at which the armed timer fires, or None."""
        return self._handle.when() if self._handle is not None else None

    def _fire(self) -> None:
        self._handle = None
        self._callback()
