"""The event buffer component: keeps the recent events for ``/debug/events`` (all replicas, lossy)."""

from __future__ import annotations

from haptic.controller.debug_server import EventRing
from haptic.core import ALL_EVENTS, Component, Event, EventBus

__all__ = ["EventBufferComponent"]


class EventBufferComponent(Component):
    name = "event-buffer"
    subscribes = (ALL_EVENTS,)
    capacity = 200
    critical = False

    def __init__(self, bus: EventBus, ring: EventRing | None = None) -> None:
        super().__init__(bus)
        self.ring = ring if ring is not None else EventRing()

    async def handle(self, event: Event) -> None:
        self.ring.add_event(event)
