"""The local backend's event trace after ``settle``: complete, even when a replica's debug server was
too busy to answer the background poller (seen under load: ``events.in_order`` missed a
``deployment.completed`` that the saved trace held)."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, cast

import httpx

from haptic.controller.observe.debug_providers import DebugProviders
from haptic.controller.observe.event_ring import EventRing
from haptic.live.debug_server import build_debug_app
from simulator.scenario.local_backend import LocalBackend


class _Busy(httpx.AsyncBaseTransport):
    """The replica's real debug app, behind a connection that times out while ``busy``."""

    def __init__(self, app: Any) -> None:
        self.inner = httpx.ASGITransport(app=app)
        self.busy = True

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.busy:
            raise httpx.ReadTimeout("the replica did not answer in time", request=request)
        return await self.inner.handle_async_request(request)


def _backend(ring: EventRing) -> tuple[LocalBackend, _Busy]:
    transport = _Busy(build_debug_app(DebugProviders(events=ring.last)))
    backend = LocalBackend("haproxy")
    replica = SimpleNamespace(running=True, process=SimpleNamespace(pid=4242))
    backend.stack = cast(Any, SimpleNamespace(controllers=[replica], debug_ports=[9],
                                             debug_url=lambda replica: "http://127.0.0.1:9"))
    backend._client = httpx.AsyncClient(transport=transport)
    return backend, transport


async def test_the_trace_is_behind_while_a_replica_does_not_answer_and_complete_once_it_did() -> None:
    ring = EventRing()
    ring.add(datetime.now(UTC).isoformat(), "deployment.completed")
    backend, transport = _backend(ring)

    assert await backend.poll_events() == ["controller-0"]
    assert await backend.trace_behind() == "the events of controller-0 could not be read"
    assert backend.trace() == []

    transport.busy = False
    assert await backend.trace_behind() == "new events arrived"
    assert [(r.source, r.type) for r in backend.trace()] == [("controller-0", "deployment.completed")]
    assert await backend.trace_behind() == ""
    assert len(backend.trace()) == 1  # each event once
    await transport.inner.aclose()
