"""``MetricsRecorder``: the metrics that follow from events (the pipeline records its own durations)."""

from __future__ import annotations

from haptic.controller.events import BecameLeader, IndexSynchronized, LostLeadership
from haptic.controller.metrics import ControllerMetrics
from haptic.core import ALL_EVENTS, Component, Event, EventBus


class MetricsRecorder(Component):
    name = "metrics"
    subscribes = (ALL_EVENTS,)
    critical = False
    capacity = 10_000

    def __init__(self, bus: EventBus, metrics: ControllerMetrics) -> None:
        super().__init__(bus)
        self.metrics = metrics

    async def handle(self, event: Event) -> None:
        self.metrics.record_event_published(event.type)
        if isinstance(event, IndexSynchronized):
            self.metrics.set_resource_counts(event.resource_counts)
        elif isinstance(event, BecameLeader):
            self.metrics.set_leader(True, self.clock.monotonic())
        elif isinstance(event, LostLeadership):
            self.metrics.set_leader(False, self.clock.monotonic())
        if self.subscription is not None and self.subscription.queued == 0:
            self.metrics.observe_bus(self.bus.stats())
