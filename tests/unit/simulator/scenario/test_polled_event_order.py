"""Backends that poll replicas for events put each poll's events in time order: invariants read the
trace in order, and a follower polled after the leader must not look as if it deployed later (found on
the cluster backend: single_deployer fired over a follower's deployment of 5 s, polled after the
leader's of 10 s)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from simulator.scenario.cluster_access import ClusterOptions, ControllerView
from simulator.scenario.cluster_backend import ClusterBackend
from simulator.scenario.invariants import InvariantMonitor
from simulator.scenario.schema import Invariants

WALL0 = 1_800_000_000.0


class _Replica(ControllerView):
    def __init__(self, index: int, items: list[dict[str, Any]]) -> None:
        self.index, self.base_url, self._items = index, f"http://replica-{index}", items

    async def events(self, limit: int = 1000) -> list[dict[str, Any]]:
        return self._items


def _event(t: float, type_: str, n: int) -> dict[str, Any]:
    stamp = datetime.fromtimestamp(WALL0 + t, UTC).isoformat()
    return {"timestamp": stamp, "type": type_, "details": {"event_id": f"e{n}"}}


async def test_one_poll_is_appended_in_time_order() -> None:
    backend = ClusterBackend(ClusterOptions(server="http://127.0.0.1:1"))
    backend._wall0 = WALL0
    leader = _Replica(0, [_event(10.0, "deployment.started", 1), _event(11.0, "deployment.completed", 2)])
    follower = _Replica(1, [_event(5.0, "deployment.started", 3), _event(6.0, "deployment.completed", 4)])
    backend._controllers = [leader, follower]
    await backend._poll_events()
    records = backend.trace()
    assert [(r.t, r.source) for r in records] == [(5.0, "controller-1"), (6.0, "controller-1"),
                                                  (10.0, "controller-0"), (11.0, "controller-0")]
    assert InvariantMonitor(Invariants())._scan(records) == []  # no deployment overlapped another
    await backend._http.aclose()
