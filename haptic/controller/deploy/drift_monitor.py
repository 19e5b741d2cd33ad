"""``DriftMonitor`` (leader-only): forces a full reconcile-and-deploy after ``driftPreventionInterval``
without a deployment, which repairs pods that restarted or were changed behind the controller's back."""

from __future__ import annotations

from haptic.controller.context import IterationContext
from haptic.controller.events import DeploymentCompleted, DriftPreventionTriggered
from haptic.core import Component, Event, EventBus


class DriftMonitor(Component):
    name = "drift-monitor"
    subscribes = (DeploymentCompleted,)
    leader_only = True

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus)
        self.interval = ctx.spec.dataplane.drift_prevention_interval.total_seconds()
        self._timer = self.clock.timer(self._fire)
        self._last = 0.0
        self.fired = 0

    async def on_start(self) -> None:
        self._last = self.clock.monotonic()
        if self.interval > 0:
            self._timer.start(self.interval)

    async def on_stop(self) -> None:
        self._timer.cancel()

    async def handle(self, event: Event) -> None:
        assert isinstance(event, DeploymentCompleted)
        self._last = self.clock.monotonic()
        if self.interval > 0:
            self._timer.start(self.interval)

    def _fire(self) -> None:
        self.fired += 1
        self.bus.publish(DriftPreventionTriggered(time_since_last_deployment_s=self.clock.monotonic() - self._last))
        self._timer.start(self.interval)
