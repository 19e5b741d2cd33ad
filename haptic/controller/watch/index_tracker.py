"""``IndexSynchronizationTracker``: publishes ``index.synchronized`` once every watcher finished its initial sync."""

from __future__ import annotations

from collections.abc import Iterable

from haptic.controller.events import IndexSynchronized, ResourceSyncComplete
from haptic.core import Component, Event, EventBus


class IndexSynchronizationTracker(Component):
    name = "index-tracker"
    subscribes = (ResourceSyncComplete,)

    def __init__(self, bus: EventBus, resources: Iterable[str]) -> None:
        super().__init__(bus)
        self.expected = sorted(resources)
        self.counts: dict[str, int] = {}
        self.synchronized = False

    async def handle(self, event: Event) -> None:
        assert isinstance(event, ResourceSyncComplete)
        self.counts[event.resource_type] = event.initial_count
        if not self.synchronized and all(name in self.counts for name in self.expected):
            self.synchronized = True
            self.publish(IndexSynchronized(resource_counts={n: self.counts[n] for n in self.expected}))
