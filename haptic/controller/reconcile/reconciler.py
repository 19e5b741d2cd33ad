"""``Reconciler``: turns store changes into ``reconciliation.triggered``, with an adaptive leading-edge debounce.

The first change triggers at once and opens a refractory window; changes inside the window are folded
into one trailing trigger when it closes (the window is not extended). The window adapts to the traffic:
it starts at ``min_debounce`` (0.25 s), doubles each time it closes on folded changes (a burst, up to
``debounce``, 5 s) and halves when it closes on none, and again for every further window length of
quiet. So an idle controller answers a change at
once and is ready for the next a quarter second later (its own status write-back no longer holds the
next change for 5 s), while a sustained stream of changes, which a big cluster sees, is coalesced to
one render per ``debounce`` seconds as before.
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
#: the shortest refractory window (an idle controller's); a burst doubles it up to ``DEFAULT_DEBOUNCE``
DEFAULT_MIN_DEBOUNCE = 0.25


class Reconciler(IterationComponent):
    name = "reconciler"
    subscribes = (ResourceIndexUpdated, IndexSynchronized, DriftPreventionTriggered, BecameLeader)

    def __init__(self, bus: EventBus, ctx: IterationContext, debounce: float = DEFAULT_DEBOUNCE,
                 min_debounce: float = DEFAULT_MIN_DEBOUNCE) -> None:
        super().__init__(bus, ctx)
        self.debounce = debounce  # the longest window
        self.min_debounce = min(min_debounce, debounce)
        self.window = self.min_debounce  # the next window's length, as of ``_quiet_since``
        self._quiet_since: float | None = None  # when the last window closed on nothing
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
                self.window, self._quiet_since = self.next_window(), None
                self._window.start(self.window)

    def _window_closed(self) -> None:
        if self._pending:
            self._pending = False
            self._trigger(TriggerReason.DEBOUNCE_TIMER)
            self.window = min(2 * self.window, self.debounce)  # a burst: coalesce more
            self._window.start(self.window)
        else:
            self.window = max(self.window / 2, self.min_debounce)  # quiet: answer sooner
            self._quiet_since = self.clock.monotonic()

    def next_window(self) -> float:
        """The window a change arriving now would open: halved once more per window length of quiet."""
        window = self.window
        if self._quiet_since is not None and not self._window.active:
            quiet = self.clock.monotonic() - self._quiet_since
            while window > self.min_debounce and quiet >= window:
                quiet -= window
                window = max(window / 2, self.min_debounce)
        return window
