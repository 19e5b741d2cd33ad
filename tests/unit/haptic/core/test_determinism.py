"""Same seed, same virtual clock => byte-identical event trace, whatever PYTHONHASHSEED is."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

from haptic.core import ALL_EVENTS, Component, Event, EventBus, LifecycleRegistry, SeededIds, VirtualClock
from tests.support.paths import REPO

from ._events import Ping, Pong


class Ticker(Component):
    name = "ticker"

    async def on_start(self) -> None:
        self.spawn(self._tick(), "tick")

    async def _tick(self) -> None:
        n = 0
        async for _ in self.clock.ticks(7.5):
            n += 1
            self.publish(Ping(n=n))


class Echo(Component):
    name = "echo"
    subscribes = (Ping,)

    async def handle(self, event: Event) -> None:
        assert isinstance(event, Ping)
        await self.clock.sleep(0.25 * (event.n % 3))
        self.publish(Pong(n=event.n * 10))


class Tracer(Component):
    name = "tracer"
    subscribes = (ALL_EVENTS,)
    critical = False

    def __init__(self, bus: EventBus) -> None:
        super().__init__(bus)
        self.lines: list[str] = []

    async def handle(self, event: Event) -> None:
        self.lines.append(json.dumps(event.to_dict(), sort_keys=True))


def trace(seed: int) -> str:
    async def main() -> str:
        bus = EventBus(VirtualClock(), SeededIds(seed))
        registry = LifecycleRegistry()
        tracer = Tracer(bus)
        for component in (tracer, Echo(bus), Ticker(bus)):
            registry.register(component)
        await registry.start()
        bus.start()
        await asyncio.sleep(60)
        await registry.stop()
        return "\n".join(tracer.lines)

    return VirtualClock.run(main())


def test_same_seed_gives_the_same_trace_and_another_seed_does_not() -> None:
    first = trace(7)
    assert first == trace(7)
    assert first != trace(8)
    lines = [json.loads(line) for line in first.splitlines()]
    assert [e["type"] for e in lines[:4]] == ["test.ping", "test.pong", "test.ping", "test.pong"]
    assert lines[0]["timestamp"] == VirtualClock().epoch + 7.5
    assert lines[1]["causation_id"] == lines[0]["event_id"]


def test_trace_does_not_depend_on_the_hash_seed() -> None:
    code = "from tests.unit.haptic.core.test_determinism import trace; print(trace(7))"
    outputs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True,
                                cwd=str(REPO))
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    assert outputs[0].strip() == trace(7)
