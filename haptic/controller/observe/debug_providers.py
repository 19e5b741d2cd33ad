"""``DebugProviders``: what the debug server shows, as callables the controller supplies.

The server (``haptic.live.debug_server``) holds providers, never state, so one server lives as long as
the process while iterations come and go. Must not import starlette, uvicorn or ``haptic.live``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry

from haptic.core import HealthReport

__all__ = ["DebugProviders", "EventsProvider", "HealthProvider"]


HealthProvider = Callable[[], HealthReport]
#: (limit, correlation_id, after) -> the newest ``limit`` events with a ``seq`` above ``after``
EventsProvider = Callable[[int, str | None, int], Sequence[Mapping[str, Any]]]


def _no_components() -> HealthReport:
    return HealthReport(True, {})


def _no_events(_limit: int, _correlation_id: str | None, _after: int) -> Sequence[Mapping[str, Any]]:
    return []


def _no_secrets() -> Iterable[str]:
    return ()


@dataclass
class DebugProviders:
    """What the server shows, supplied by the controller. All are called per request."""

    vars: Mapping[str, Callable[[], Any]] = field(default_factory=dict)
    health: HealthProvider = _no_components
    ready: HealthProvider = _no_components
    events: EventsProvider = _no_events
    metrics: Callable[[], CollectorRegistry] | None = None
    secrets: Callable[[], Iterable[str]] = _no_secrets
