"""kopf (standalone, explicit login) runs an ``on.event`` handler for a custom resource of the fake."""

from __future__ import annotations

import asyncio
from typing import Any

import kopf
import pytest

from simulator.kube import BackgroundServer
from tests.integration.kube_helpers import WIDGET_CRD, async_wait_until


@pytest.fixture
def server() -> Any:
    with BackgroundServer() as srv:
        yield srv


async def test_kopf_on_event_sees_create_update_delete(server: BackgroundServer) -> None:
    crd_rt = server.call(lambda api: api.resolve("apiextensions.k8s.io/v1", "customresourcedefinitions"))
    server.call(lambda api: api.create(crd_rt, None, WIDGET_CRD))
    registry = kopf.OperatorRegistry()
    seen: list[tuple[str | None, str, Any]] = []

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        return kopf.ConnectionInfo(server=server.url)

    @kopf.on.event("example.com", "v1", "widgets", registry=registry)
    async def on_widget(type: str | None, body: Any, **_: Any) -> None:
        seen.append((type, body["metadata"]["name"], (body.get("spec") or {}).get("size")))

    settings = kopf.OperatorSettings()
    settings.watching.server_timeout = 5
    settings.posting.enabled = False
    settings.scanning.disabled = True
    stop = asyncio.Event()
    operator = asyncio.create_task(kopf.operator(registry=registry, settings=settings, clusterwide=True,
                                                 standalone=True, stop_flag=stop))
    rt = server.call(lambda api: api.resolve("example.com/v1", "widgets"))
    try:
        await async_wait_until(lambda: server.call(lambda api: api.watcher_count()) > 0, what="kopf's watch")
        server.call(lambda api: api.create(rt, "default", {"metadata": {"name": "w1"}, "spec": {"size": 1}}))
        await async_wait_until(lambda: ("ADDED", "w1", 1) in seen, what="ADDED w1")
        server.call(lambda api: api.patch(rt, "default", "w1", "merge", {"spec": {"size": 2}}))
        await async_wait_until(lambda: ("MODIFIED", "w1", 2) in seen, what="MODIFIED w1")
        server.call(lambda api: api.delete(rt, "default", "w1"))
        await async_wait_until(lambda: any(t == "DELETED" and n == "w1" for t, n, _ in seen), what="DELETED w1")
    finally:
        stop.set()
        await asyncio.wait_for(operator, 30)
    names = [name for _, name, _ in seen]
    assert set(names) == {"w1"}
    kinds = [t for t, _, _ in seen]
    assert kinds.index("ADDED") < kinds.index("MODIFIED") < kinds.index("DELETED")


async def test_kopf_relists_after_410(server: BackgroundServer) -> None:
    """While kopf cannot connect, a write and a compaction happen: its next watch gets 410 and it re-lists."""
    rt = server.call(lambda api: api.resolve("v1", "configmaps"))
    server.call(lambda api: api.create(rt, "default", {"metadata": {"name": "before"}}))
    registry = kopf.OperatorRegistry()
    seen: list[tuple[str | None, str]] = []

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        return kopf.ConnectionInfo(server=server.url)

    @kopf.on.event("v1", "configmaps", registry=registry)
    async def on_configmap(type: str | None, body: Any, **_: Any) -> None:
        if body["metadata"]["namespace"] == "default":
            seen.append((type, body["metadata"]["name"]))

    settings = kopf.OperatorSettings()
    settings.watching.server_timeout = 30
    settings.watching.reconnect_backoff = 0.05
    settings.networking.error_backoffs = [0.3]
    settings.posting.enabled = False
    settings.scanning.disabled = True
    stop = asyncio.Event()
    operator = asyncio.create_task(kopf.operator(registry=registry, settings=settings, clusterwide=True,
                                                 standalone=True, stop_flag=stop))
    try:
        await async_wait_until(lambda: (None, "before") in seen, what="kopf's initial listing")
        await async_wait_until(lambda: server.call(lambda api: api.watcher_count()) > 0, what="kopf's watch")
        server.run(lambda srv: srv.refuse(0.2))
        server.call(lambda api: api.drop_watches())
        server.call(lambda api: api.create(rt, "default", {"metadata": {"name": "unseen"}}))
        server.call(lambda api: api.compact())
        await async_wait_until(lambda: (None, "unseen") in seen, what="the re-list after 410")
    finally:
        stop.set()
        await asyncio.wait_for(operator, 30)
    assert ("ADDED", "unseen") not in seen
    assert seen.count((None, "before")) == 2, "the re-list delivers every object again with type None"
