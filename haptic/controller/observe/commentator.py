"""``EventCommentator``: one log line per domain event, and the ring of recent events (``EventRing``).

The controller's only event ring: ``/debug/events`` reads the ``EventRing`` it fills (the controller
hands one ring to every iteration so the history survives reinitialization). Lossy (never slows the
pipeline). Levels follow the original: failures at ERROR, credential problems
and leadership loss at WARNING, milestones at INFO, the rest at DEBUG. The ring feeds ``/debug/events``.
Secrets never reach a line: events render through ``to_dict()``, which drops secret fields.
"""

from __future__ import annotations

import logging

from haptic.controller.events import DeploymentCompleted, LostLeadership
from haptic.controller.observe.event_ring import EventRing
from haptic.core import ALL_EVENTS, Component, Event, EventBus

_ERROR = frozenset({"reconciliation.failed", "template.render.failed", "validation.failed",
                    "instance.deployment.failed",
                    "webhook.validation.error", "config.invalid"})
_WARNING = frozenset({"credentials.invalid", "webhook.validation.denied", "leader.lost"})
_INFO = frozenset({"config.validated", "index.synchronized", "leader.election.started", "leader.became",
                   "leader.observed", "deployment.completed", "haproxy.pods.discovered", "config.published"})
_SKIP = frozenset({"type", "event_id", "correlation_id", "causation_id", "timestamp"})


def level_of(event: Event) -> int:
    if event.type in _ERROR:
        return logging.ERROR
    if isinstance(event, LostLeadership) and event.reason == "stopped":
        return logging.INFO  # a graceful stop or reinitialization, not a loss
    if event.type in _WARNING:
        return logging.WARNING
    if isinstance(event, DeploymentCompleted) and event.total_api_operations == 0 and not event.failed:
        return logging.DEBUG
    if event.type in _INFO:
        return logging.INFO
    return logging.DEBUG


def summarize(event: Event) -> str:
    """``key=value`` pairs of the event's scalar fields (long values cut)."""
    parts = []
    for key, value in event.to_dict().items():
        if key in _SKIP:
            continue
        if isinstance(value, str | int | float | bool) or value is None:
            text = str(value)
            parts.append(f"{key}={text[:120] + '...' if len(text) > 120 else text}")
        elif isinstance(value, list):
            parts.append(f"{key}=[{len(value)}]")
    return " ".join(parts)


class EventCommentator(Component):
    name = "commentator"
    subscribes = (ALL_EVENTS,)
    critical = False
    capacity = 10_000

    def __init__(self, bus: EventBus, logger: logging.Logger, ring: EventRing | None = None) -> None:
        super().__init__(bus)
        self.logger = logger
        self.ring = ring if ring is not None else EventRing()

    async def handle(self, event: Event) -> None:
        summary = summarize(event)
        self.ring.add_event(event, summary)
        level = level_of(event)
        if self.logger.isEnabledFor(level):
            self.logger.log(level, "%s %s correlation_id=%s", event.type, summary, event.correlation_id)
