"""Clock: loop time, wall time derived from it, sleeps, timers and ticks; virtual time via looptime."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import pytest

from haptic.core import RealClock, Timer, VirtualClock
from haptic.core.clock import DEFAULT_VIRTUAL_EPOCH


def test_ten_minute_timer_sequence_fires_at_exact_virtual_times() -> None:
    clock = VirtualClock()
    fired: list[tuple[str, float]] = []

    async def scenario() -> list[tuple[str, float]]:
        assert VirtualClock.is_virtual()
        done = asyncio.Event()
        clock.call_later(600, lambda: (fired.append(("end", clock.monotonic())), done.set()))
        for minute in range(1, 10):
            clock.call_later(60 * minute, lambda m=minute: fired.append((f"minute-{m}", clock.monotonic())))
        await clock.sleep(30)
        fired.append(("slept-30", clock.monotonic()))
        await done.wait()
        return fired

    real_started = time.perf_counter()
    result = VirtualClock.run(scenario())
    real_elapsed = time.perf_counter() - real_started
    expected = [("slept-30", 30.0)] + [(f"minute-{m}", 60.0 * m) for m in range(1, 10)] + [("end", 600.0)]
    assert result == expected
    # Shown, not asserted (timings are never asserted): 600 virtual seconds took this much real time.
    print(f"600 s of virtual timers ran in {real_elapsed:.3f} s of real time")


@pytest.mark.looptime
async def test_virtual_wall_time_is_epoch_plus_loop_time() -> None:
    clock = VirtualClock()
    assert clock.wall() == DEFAULT_VIRTUAL_EPOCH + clock.monotonic()
    before = clock.monotonic()
    await clock.sleep(3600)
    assert clock.monotonic() == before + 3600
    assert clock.now() == datetime.fromtimestamp(DEFAULT_VIRTUAL_EPOCH + before + 3600, UTC)


@pytest.mark.looptime
async def test_virtual_clock_custom_epoch() -> None:
    clock = VirtualClock(epoch=1000.0)
    await clock.sleep(5)
    assert clock.wall() == 1000.0 + clock.monotonic()


@pytest.mark.looptime
async def test_real_clock_wall_is_anchored_to_system_time_and_derived_from_loop_time() -> None:
    clock = RealClock()
    system = time.time()
    wall_before = clock.wall()
    assert abs(wall_before - system) < 60  # the anchor is the system clock, not an arbitrary epoch
    # On a virtual loop, 100 s pass for the loop but not for the system: wall time follows the loop.
    await clock.sleep(100)
    assert clock.wall() - wall_before == pytest.approx(100, abs=1e-6)


def test_clock_needs_a_running_loop() -> None:
    with pytest.raises(RuntimeError):
        RealClock().monotonic()


@pytest.mark.looptime
async def test_timer_fires_once_and_restarting_moves_the_deadline() -> None:
    clock = VirtualClock()
    fired: list[float] = []
    timer = Timer(clock, lambda: fired.append(clock.monotonic()))
    t0 = clock.monotonic()
    timer.start(10)
    assert timer.active
    assert timer.deadline == t0 + 10
    await clock.sleep(5)
    timer.start(10)  # re-armed at t0+5: now due at t0+15
    await clock.sleep(20)
    assert fired == [t0 + 15]
    assert not timer.active
    assert timer.deadline is None


@pytest.mark.looptime
async def test_timer_cancel_prevents_firing() -> None:
    clock = VirtualClock()
    fired: list[float] = []
    timer = clock.timer(lambda: fired.append(clock.monotonic()))
    timer.start(1)
    timer.cancel()
    await clock.sleep(5)
    assert fired == []
    assert not timer.active


@pytest.mark.looptime
async def test_call_at_uses_monotonic_time() -> None:
    clock = VirtualClock()
    fired: list[float] = []
    when = clock.monotonic() + 42
    clock.call_at(when, lambda: fired.append(clock.monotonic()))
    await clock.sleep(50)
    assert fired == [when]


@pytest.mark.looptime
async def test_ticks_are_drift_free_and_skip_missed_ticks() -> None:
    clock = VirtualClock()
    start = clock.monotonic()
    seen: list[float] = []
    async for due in clock.ticks(5):
        seen.append(due - start)
        if len(seen) == 2:
            await clock.sleep(12)  # a slow consumer: misses the ticks at 15 and 20
        if len(seen) == 4:
            break
    assert seen == [5, 10, 25, 30]


@pytest.mark.looptime
async def test_a_tick_due_exactly_when_the_consumer_returns_still_fires() -> None:
    clock = VirtualClock()
    start = clock.monotonic()
    seen: list[float] = []
    async for due in clock.ticks(5):
        seen.append(due - start)
        if len(seen) == 1:
            await clock.sleep(10)  # back exactly at the tick due at 15
        if len(seen) == 3:
            break
    assert seen == [5, 15, 20]


async def test_ticks_reject_non_positive_interval() -> None:
    with pytest.raises(ValueError, match="positive"):
        async for _ in RealClock().ticks(0):
            pass


@pytest.mark.looptime
async def test_clock_timeout_raises_after_virtual_delay() -> None:
    clock = VirtualClock()
    start = clock.monotonic()
    with pytest.raises(TimeoutError):
        async with clock.timeout(7):
            await clock.sleep(100)
    assert clock.monotonic() - start == 7
