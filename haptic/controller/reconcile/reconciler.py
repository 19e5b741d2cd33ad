"""``Reconciler``: turns store changes into ``reconciliation.triggered``, with a leading-edge debounce.

The first change triggers at once and opens a refractory window (``debounce`` seconds); changes
inside the window are folded into one trailing trigger when it closes (the window is not extended).
EndpointSlice changes are never delayed: scaling must reach the runtime API at once. Changes of
``haproxy-pods`` are discovery's business, not a reason to render. Initial sync, drift prevention and
leadership gains trigger immediately and cannot be coalesced away.
"""

from __future__ import annotations

from haptic.controller.component import IterationComponent
from haptic.controller.context import IterationContext
from haptic.controller.events import (
    BecameLeader,
    DriftPreventionTriggered,
    IndexSynchronized,
    ReconciliationTriggered,
    ResourceIndexUpdated,
    TriggerReason,
)
from haptic.core import Event, EventBus
from haptic.names import HAPROXY_PODS

DEFAULT_DEBOUNCE = 5.0


class Reconciler(IterationComponent):
    name = "reconciler"
    subscribes = (ResourceIndexUpdated, IndexSynchronized, DriftPreventionTriggered, BecameLeader)

    def __init__(self, bus: EventBus, ctx: IterationContext, debounce: float = DEFAULT_DEBOUNCE) -> None:
        super().__init__(bus, ctx)
        self.debounce = debounce
        self.synchronized = False
        self._pending = False
        self._window = self.clock.timer(self._window_closed)

    async def on_stop(self) -> None:
        self._window.cancel()

    @property
    def window_open(self) -> bool:
        """The debounce window is open: the next change will wait for it to close."""
        return self._window.active

    @property
    def holds_change(self) -> bool:
        """A store change waits for the debounce window to close (its trigger is still to come)."""
        return self._pending and self._window.active

    def _trigger(self, reason: TriggerReason, *, coalescible: bool = True, cause: Event | None = None) -> None:
        self.bus.publish(ReconciliationTriggered(reason=str(reason), coalescible=coalescible), cause=cause)

    async def handle(self, event: Event) -> None:
        if isinstance(event, IndexSynchronized):
            self.synchronized = True
            self._trigger(TriggerReason.INDEX_SYNCHRONIZED, coalescible=False, cause=event)
        elif isinstance(event, DriftPreventionTriggered):
            self._trigger(TriggerReason.DRIFT_PREVENTION, coalescible=False, cause=event)
        elif isinstance(event, BecameLeader):
            if self.synchronized:
                self._trigger(TriggerReason.BECAME_LEADER, coalescible=False, cause=event)
        elif isinstance(event, ResourceIndexUpdated):
            if event.initial_sync or event.resource_type == HAPROXY_PODS or not self.synchronized:
                return
            if self.ctx.is_endpoint_type(event.resource_type):
                self._trigger(TriggerReason.RESOURCE_CHANGE, cause=event)
            elif self._window.active:
                self._pending = True
            else:
                self._trigger(TriggerReason.RESOURCE_CHANGE, cause=event)
                self._window.start(self.debounce)

    def _window_closed(self) -> None:
        if self._pending:
            self._pending = False
            self._trigger(TriggerReason.DEBOUNCE_TIMER)
            self._window.start(self.debounce)
