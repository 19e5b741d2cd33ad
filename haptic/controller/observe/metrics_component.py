"""The metrics component: turns domain events into Prometheus metrics (all replicas, lossy).

It reads every event (counting them by type), maps the pipeline's events to durations and results,
and every ``poll_interval`` copies the bus's per-subscriber drop/queue counters and accounts time as
leader. It never blocks the bus: as an observability subscriber it loses events rather than stall.
"""

from __future__ import annotations

from haptic.controller import events as ev
from haptic.controller.metrics import ControllerMetrics, DeploymentResult
from haptic.core import ALL_EVENTS, Component, Event, EventBus

__all__ = ["MetricsComponent", "deployment_result"]

POLL_INTERVAL = 5.0


def deployment_result(event: ev.DeploymentCompleted) -> DeploymentResult:
    if event.total == 0:
        return "skipped"
    if event.failed == 0:
        return "success"
    return "failure" if event.succeeded == 0 else "partial"


class MetricsComponent(Component):
    name = "metrics"
    subscribes = (ALL_EVENTS,)
    capacity = 200
    critical = False

    def __init__(self, bus: EventBus, metrics: ControllerMetrics, poll_interval: float = POLL_INTERVAL) -> None:
        super().__init__(bus)
        self.metrics = metrics
        self._poll_interval = poll_interval
        #: (kind, namespace, name) -> reason, of the objects the leader's render leaves out
        self._excluded: dict[tuple[str, str, str], str] = {}

    async def on_start(self) -> None:
        self.spawn(self._poll(), "poll")

    async def _poll(self) -> None:
        async for now in self.clock.ticks(self._poll_interval):
            self.metrics.observe_bus(self.bus.stats())
            self.metrics.update_time_as_leader(now)

    def _set_excluded(self) -> None:
        counts: dict[tuple[str, str], int] = {}
        for (kind, _ns, _name), reason in self._excluded.items():
            counts[(kind, reason)] = counts.get((kind, reason), 0) + 1
        self.metrics.set_excluded(counts)

    async def handle(self, event: Event) -> None:
        m = self.metrics
        m.record_event_published(event.type)
        match event:
            case ev.ReconciliationCompleted():
                m.record_reconciliation(event.duration_s)
            case ev.ReconciliationFailed():
                m.record_reconciliation_failure(event.phase)
            case ev.TemplateRendered():
                m.record_render(event.duration_s)
            case ev.ValidationCompleted():
                m.record_validation(event.duration_s, ok=True)
            case ev.ValidationFailed():
                m.record_validation(event.duration_s, ok=False)
            case ev.DeploymentCompleted():
                m.record_deployment(event.duration_s, deployment_result(event))
            case ev.InstanceDeployed():
                m.record_instance_deployment(ok=True)
            case ev.InstanceDeploymentFailed():
                m.record_instance_deployment(ok=False)
            case ev.ConfigAppliedToPod():
                m.record_pod_sync(reloaded=event.sync.reload_triggered, fallback=event.sync.fallback_used)
            case ev.HAProxyPodsDiscovered():
                m.set_pods(event.count)
            case ev.IndexSynchronized():
                m.set_resource_counts(event.resource_counts)
            case ev.BecameLeader():
                m.set_leader(True, self.clock.monotonic())
            case ev.LostLeadership():
                m.set_leader(False, self.clock.monotonic())
                self._excluded.clear()
                self._set_excluded()
            case ev.ResourceExcluded():
                m.record_exclusion(event.kind, event.reason)
                self._excluded[(event.kind, event.namespace, event.name)] = event.reason
                self._set_excluded()
            case ev.ResourceReadmitted():
                self._excluded.pop((event.kind, event.namespace, event.name), None)
                self._set_excluded()
            case _:
                pass
