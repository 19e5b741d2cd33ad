"""Event bus throughput: events/s to one subscriber and fanned out to ten (prints figures, asserts nothing).

Each run publishes N events from one task in bursts of 100 (yielding to the loop between bursts) while
the subscribers consume them with ``await sub.get()``. Real clock and uuid4 ids, as in production.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import ClassVar

from haptic.core import Component, Event, EventBus, RealClock, SequentialIds, UuidIds
from haptic.core.ids import IdSource

N = 200_000
BURST = 100


@dataclass(frozen=True, slots=True)
class BenchTick(Event):
    type: ClassVar[str] = "bench.tick"
    n: int


async def _run(subscribers: int, n: int, ids: IdSource) -> tuple[float, int, int]:
    bus = EventBus(RealClock(), ids, default_capacity=1000)
    subs = [bus.subscribe(f"sub-{i}", types=(BenchTick,)) for i in range(subscribers)]
    bus.start()
    received = [0] * subscribers

    async def consume(i: int) -> None:
        sub = subs[i]
        count = 0
        while count < n:
            await sub.get()
            count += 1
        received[i] = count

    consumers = [asyncio.create_task(consume(i)) for i in range(subscribers)]
    await asyncio.sleep(0)
    started = time.perf_counter()
    for start in range(0, n, BURST):
        for k in range(start, min(start + BURST, n)):
            bus.publish(BenchTick(n=k))
        await asyncio.sleep(0)
    await asyncio.gather(*consumers)
    elapsed = time.perf_counter() - started
    dropped = sum(s.dropped for s in bus.stats())
    return n / elapsed, dropped, sum(received)


class Counter(Component):
    subscribes = (BenchTick,)
    capacity = 1000

    def __init__(self, bus: EventBus, name: str, expected: int, done: asyncio.Event) -> None:
        super().__init__(bus, name=name)
        self.expected = expected
        self.all_done = done
        self.count = 0

    async def handle(self, event: Event) -> None:
        self.count += 1
        if self.count == self.expected:
            self.all_done.set()


async def _run_components(subscribers: int, n: int) -> tuple[float, int]:
    """The same, through ``Component`` subclasses (the way controller components consume)."""
    bus = EventBus(RealClock(), UuidIds())
    dones = [asyncio.Event() for _ in range(subscribers)]
    counters = [Counter(bus, f"counter-{i}", n, dones[i]) for i in range(subscribers)]
    bus.start()
    for c in counters:
        await c.start()
    started = time.perf_counter()
    for start in range(0, n, BURST):
        for k in range(start, min(start + BURST, n)):
            bus.publish(BenchTick(n=k))
        await asyncio.sleep(0)
    await asyncio.gather(*(d.wait() for d in dones))
    elapsed = time.perf_counter() - started
    for c in counters:
        await c.stop()
    return n / elapsed, sum(s.dropped for s in bus.stats())


def main() -> None:
    for label, ids_factory in (("uuid4 ids", UuidIds), ("sequential ids", SequentialIds)):
        rate1, dropped1, got1 = asyncio.run(_run(1, N, ids_factory()))
        rate10, dropped10, got10 = asyncio.run(_run(10, N // 5, ids_factory()))
        print(f"bus, {label}: 1 subscriber: {rate1:,.0f} events/s (received {got1}, dropped {dropped1})")
        print(f"bus, {label}: 10 subscribers: {rate10:,.0f} events/s published, {rate10 * 10:,.0f} deliveries/s "
              f"(received {got10}, dropped {dropped10})")
    rate1, dropped1 = asyncio.run(_run_components(1, N))
    rate10, dropped10 = asyncio.run(_run_components(10, N // 5))
    print(f"components, uuid4 ids: 1 subscriber: {rate1:,.0f} events/s (dropped {dropped1})")
    print(f"components, uuid4 ids: 10 subscribers: {rate10:,.0f} events/s published (dropped {dropped10})")
    print("targets: >= 100,000 events/s to 1 subscriber, >= 20,000 events/s fanned out to 10")


if __name__ == "__main__":
    main()
