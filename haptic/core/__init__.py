"""Core runtime: clock, id sources, events, event bus, component base and lifecycle registry, the
one definition of the control characters no rendered or sent value may hold (``control_characters``), and
a memo of texts cut at a separator (``text_cuts``, shared by the passes over one rendered config),
``identity.same_items`` (the same objects in the same order: what identity memos ask), large texts' UTF-8 a slice
at a time (``utf8``), the collector paused over large passes in several threads (``gc_pause``), and the
SHA-256 of large texts that come again worked out once (``digests``), and a dict with the changes made over it
as one dict (``overlays``).

Pure and domain-agnostic: knows nothing about Kubernetes or HAProxy. Its errors are in ``errors``
(base ``CoreError``). Must not import any other ``haptic`` subpackage.

Usage (the shape every controller iteration takes)::

    from dataclasses import dataclass
    from typing import ClassVar

    from haptic.core import Component, Event, EventBus, LifecycleRegistry, RealClock, UuidIds

    @dataclass(frozen=True, slots=True)
    class Pinged(Event):
        type: ClassVar[str] = "demo.pinged"
        target: str

    @dataclass(frozen=True, slots=True)
    class Ponged(Event):
        type: ClassVar[str] = "demo.ponged"
        target: str

    class Ponger(Component):
        name = "ponger"
        subscribes = (Pinged,)

        async def handle(self, event: Event) -> None:
            assert isinstance(event, Pinged)
            self.publish(Ponged(target=event.target))  # same correlation, caused by the ping

    async def main() -> None:
        bus = EventBus(RealClock(), UuidIds())
        registry = LifecycleRegistry()
        registry.register(Ponger(bus))          # subscribes now: nothing published later is lost
        pongs = bus.subscribe("test", types=(Ponged,))
        bus.publish(Pinged(target="a"))         # buffered until the bus starts
        await registry.start()
        bus.start()
        pong = await pongs.get()
        await registry.stop()

For tests and the simulator use ``VirtualClock`` (virtual loop time via ``looptime``) and
``SequentialIds``/``SeededIds``; the code under test does not change.
"""

from haptic.core.bus import (
    EventBus,
    EventSelector,
    RequestResult,
    SubscriberStats,
    Subscription,
    SubscriptionClosed,
)
from haptic.core.clock import Clock, RealClock, Timer, VirtualClock
from haptic.core.component import ALL_EVENTS, Component, Health
from haptic.core.event import DIGEST, OMIT, SECRET, Event, JsonValue, Request, Response, event_types, to_json_safe
from haptic.core.ids import IdSource, SeededIds, SequentialIds, UuidIds
from haptic.core.lifecycle import (
    ComponentHealth,
    DependencyError,
    HealthReport,
    Lifecycle,
    LifecycleRegistry,
    StartError,
    Status,
)
from haptic.core.tasks import cancel_and_wait

__all__ = [
    "ALL_EVENTS",
    "DIGEST",
    "OMIT",
    "SECRET",
    "Clock",
    "Component",
    "ComponentHealth",
    "DependencyError",
    "Event",
    "EventBus",
    "EventSelector",
    "Health",
    "HealthReport",
    "IdSource",
    "JsonValue",
    "Lifecycle",
    "LifecycleRegistry",
    "RealClock",
    "Request",
    "RequestResult",
    "Response",
    "SeededIds",
    "SequentialIds",
    "StartError",
    "Status",
    "SubscriberStats",
    "Subscription",
    "SubscriptionClosed",
    "Timer",
    "UuidIds",
    "VirtualClock",
    "cancel_and_wait",
    "event_types",
    "to_json_safe",
]
