"""``EventRing``: the bounded buffer of recent events that ``/debug/events`` shows.

Filled by the ``EventCommentator``; read through the ``DebugProviders.events`` provider. Plain data,
no HTTP: must not import starlette, uvicorn or ``haptic.live``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from haptic.core import Event

__all__ = ["EventRing"]


class EventRing:
    """A bounded, in-order buffer of recent events for ``/debug/events`` (oldest dropped first).

    Each item has a ``seq`` number, increasing from 1 for the ring's lifetime, so that a reader can ask
    for what came after the last item it saw (``after``) instead of re-reading the whole ring."""

    def __init__(self, capacity: int = 1000) -> None:
        self._items: deque[dict[str, Any]] = deque(maxlen=capacity)
        self._seq = 0

    def add(
        self,
        timestamp: str,
        event_type: str,
        summary: str = "",
        details: Mapping[str, Any] | None = None,
        correlation_id: str | None = None,
    ) -> None:
        self._seq += 1
        self._items.append(
            {
                "seq": self._seq,
                "timestamp": timestamp,
                "type": event_type,
                "summary": summary,
                "details": dict(details or {}),
                "correlation_id": correlation_id,
            }
        )

    def last(self, limit: int, correlation_id: str | None = None, after: int = 0) -> list[dict[str, Any]]:
        """The newest ``limit`` items (of ``correlation_id``; with a ``seq`` above ``after``), oldest first."""
        items: Iterator[dict[str, Any]] = iter(self._items)
        if after:
            items = (e for e in items if e["seq"] > after)
        if correlation_id:
            items = (e for e in items if e.get("correlation_id") == correlation_id)
        selected = list(items)
        return selected[-limit:] if limit > 0 else []

    def add_event(self, event: Event, summary: str = "") -> None:
        """Records a published bus event (envelope sealed); its fields become the details."""
        data = event.to_dict()
        details = {k: v for k, v in data.items() if k not in ("type", "timestamp", "correlation_id")}
        moment = datetime.fromtimestamp(event.timestamp, UTC).isoformat()
        self.add(moment, event.type, summary, details, event.correlation_id or None)

    def __len__(self) -> int:
        return len(self._items)
