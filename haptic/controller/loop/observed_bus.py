"""``ObservedBus``: an ``EventBus`` that reports every published event to an observer, in publish order.

The simulator records its trace through it (virtual timestamps, deterministic order); the live
controller passes no observer.
"""

from __future__ import annotations

from collections.abc import Callable

from haptic.core import Event, EventBus

Observer = Callable[[Event], None]


class ObservedBus(EventBus):
    observer: Observer | None = None

    def publish(self, event: Event, *, cause: Event | None = None) -> int:
        queued = super().publish(event, cause=cause)
        if self.observer is not None:
            self.observer(event)
        return queued
