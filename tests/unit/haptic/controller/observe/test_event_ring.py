"""The debug event ring: bounded, ordered, filtered by correlation, fed from sealed bus events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from haptic.controller.observe.event_ring import EventRing
from haptic.core import SECRET, Event


@dataclass(frozen=True, slots=True, kw_only=True)
class _CredsChanged(Event):
    type: ClassVar[str] = "test.debugring.creds"
    username: str
    password: str = field(default="", metadata=SECRET, repr=False)


def test_ring_keeps_the_newest_and_filters_by_correlation() -> None:
    ring = EventRing(capacity=3)
    for i in range(5):
        ring.add(f"t{i}", "x", correlation_id="odd" if i % 2 else "even")
    assert len(ring) == 3
    assert [e["timestamp"] for e in ring.last(10)] == ["t2", "t3", "t4"]
    assert [e["timestamp"] for e in ring.last(10, "even")] == ["t2", "t4"]
    assert ring.last(0) == []


def test_a_reader_gets_only_what_came_after_the_last_item_it_saw() -> None:
    ring = EventRing(capacity=3)
    for i in range(5):
        ring.add(f"t{i}", "x")
    seen = ring.last(10)
    assert [e["seq"] for e in seen] == [3, 4, 5], "sequence numbers outlive the items the ring dropped"
    ring.add("t5", "x")
    assert [e["timestamp"] for e in ring.last(10, after=seen[-1]["seq"])] == ["t5"]
    assert ring.last(10, after=6) == []


def test_add_event_uses_the_envelope_and_leaves_secrets_out() -> None:
    ring = EventRing()
    event = _CredsChanged(username="admin", password="pw-123456", correlation_id="c9", event_id="e1",
                          timestamp=1_735_689_600.5)
    ring.add_event(event, summary="credentials changed")
    (entry,) = ring.last(1)
    assert entry["type"] == "test.debugring.creds"
    assert entry["timestamp"] == "2025-01-01T00:00:00.500000+00:00"
    assert entry["correlation_id"] == "c9"
    assert entry["details"]["username"] == "admin"
    assert entry["details"]["event_id"] == "e1"
    assert "pw-123456" not in repr(entry)
