"""Virtual time: how much real time ten virtual minutes of timers, sleeps and ticks take (prints figures)."""

from __future__ import annotations

import asyncio
import time

from haptic.core import VirtualClock


async def _ten_minutes(clock: VirtualClock) -> tuple[float, int]:
    fired = 0

    def fire() -> None:
        nonlocal fired
        fired += 1

    for second in range(1, 601):
        clock.call_later(second, fire)
    ticks = 0
    async for _ in clock.ticks(0.5):
        ticks += 1
        if ticks == 1200:
            break
    await asyncio.sleep(1)
    return clock.monotonic(), fired + ticks


def main() -> None:
    clock = VirtualClock()
    started = time.perf_counter()
    virtual, fired = VirtualClock.run(_ten_minutes(clock))
    real = time.perf_counter() - started
    print(f"virtual clock: {virtual:.1f} s of loop time, {fired} timers/ticks fired, in {real:.3f} s of real time "
          f"({virtual / real:,.0f}x)")


if __name__ == "__main__":
    main()
