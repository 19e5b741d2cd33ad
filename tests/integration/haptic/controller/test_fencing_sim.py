"""Fencing: a replica that lost (or cannot prove) leadership makes no further Dataplane write.

Every write the HAProxy pods receive is recorded with the replica that sent it, so the property is
checked where it matters (at the pods), not only from the controller's own events.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx
import pytest

from simulator.cluster_objects import endpoint_slice, ingress
from simulator.harness import Harness

pytestmark = pytest.mark.looptime


@dataclass
class Write:
    t: float
    replica: str
    method: str
    path: str


class _Recording(httpx.AsyncBaseTransport):
    """Records every non-GET request a replica sends to a pod, then passes it on."""

    def __init__(self, inner: httpx.AsyncBaseTransport, replica: str, log: list[Write]) -> None:
        self.inner, self.replica, self.log = inner, replica, log

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        # Recorded once the pod has handled it: a write cancelled on the way never reached the pod.
        if request.method != "GET":
            self.log.append(Write(asyncio.get_running_loop().time(), self.replica, request.method, request.url.path))
        return response


def _record_writes(h: Harness, log: list[Write]) -> None:
    for replica in h.replicas:
        inner = replica.controller.ports.dataplane_transport

        def factory(url: str, inner=inner, name=replica.name) -> httpx.AsyncBaseTransport | None:  # type: ignore[no-untyped-def]
            transport = inner(url)
            return None if transport is None else _Recording(transport, name, log)

        replica.controller.ports.dataplane_transport = factory


def _first(h: Harness, type_name: str, replica: str, after: float = 0.0) -> float | None:
    times = [e.t for e in h.trace if e.event.type == type_name and e.replica == replica and e.t >= after]
    return times[0] if times else None


# Where in the electors' 2 s renew/campaign cycle the outage ends decides who acts first afterwards.
@pytest.mark.parametrize("phase", [0.0, 0.5, 1.0, 1.5])
async def test_deposed_leader_writes_nothing_once_the_lease_is_taken_during_an_outage(haproxy_bin: str,
                                                                                     phase: float) -> None:
    async with Harness(pods=2, replicas=2, haproxy_binary=haproxy_bin) as h:
        await h.settle()
        log: list[Write] = []
        _record_writes(h, log)
        assert h.leaders() == ["controller-0"]
        for pod in h.pods.values():
            pod.dataplane.slow_down(4.0)  # a deployment now takes many seconds
        h.apply(endpoint_slice("api", ["10.3.0.1"]))
        h.apply(ingress("api", "api.example", "api"))
        loop = asyncio.get_running_loop()
        start = loop.time()
        while _first(h, "deployment.started", "controller-0", start) is None:
            await h.advance(0.25)
        await h.advance(1.0 + phase)
        # The API goes away, and while it is away the Lease is handed to the follower (a foreign write):
        # the leader cannot renew, and cannot see that it lost.
        h.kube_outage(3.0)
        h.take_lease(to=1)
        h.apply(endpoint_slice("api", ["10.3.0.1", "10.3.0.2"]))  # the new leader has something to write
        await h.settle(limit=120)
        assert h.leaders() == ["controller-1"]
        lost = _first(h, "leader.lost", "controller-0", start)
        assert lost is not None
        old = [w for w in log if w.replica == "controller-0"]
        new = [w for w in log if w.replica == "controller-1"]
        assert new, "the new leader deployed"
        # No write of the deposed leader reached a pod once the new leader started writing ...
        assert max((w.t for w in old), default=float("-inf")) < min(w.t for w in new), (old[-3:], new[:3])
        # ... and its deployment had ended (cancelled) before the new leader's first one started.
        ended = [e.t for e in h.trace if e.replica == "controller-0" and e.t >= start
                 and e.event.type in ("deployment.completed", "deployment.cancelled")]
        assert ended and max(ended) <= _first(h, "deployment.started", "controller-1", start)  # type: ignore[operator]
        for pod in (0, 1):
            assert "10.3.0.2" in h.deployed_config(pod)
