"""``ResourceWatcher`` on the bus against the fake API: the initial list, then one
``resource.index.updated`` per change with its created/modified/deleted counts."""

from __future__ import annotations

import asyncio

import pytest

from haptic.controller.events import ResourceIndexUpdated, ResourceSyncComplete
from haptic.controller.watch.watcher import ResourceWatcher
from simulator.cluster_objects import ingress
from tests.support.controller import fake_cluster, make_ctx, started_bus

pytestmark = pytest.mark.looptime


async def pause() -> None:
    await asyncio.sleep(0.5)


async def test_initial_sync_then_created_modified_deleted() -> None:
    api, kube = fake_cluster()
    ingresses = api.types.by_kind("networking.k8s.io/v1", "Ingress")
    assert ingresses is not None
    api.create(ingresses, "default", ingress("a", "a.example", "a"))
    api.create(ingresses, "default", ingress("b", "b.example", "b"))
    bus = started_bus()
    out = bus.subscribe("out", types=(ResourceSyncComplete, ResourceIndexUpdated))
    watcher = ResourceWatcher(bus, make_ctx(kube=kube), "ingresses")
    await watcher.start()
    await pause()
    assert watcher.synced.is_set()
    [synced] = out.drain()
    assert isinstance(synced, ResourceSyncComplete) and synced.initial_count == 2
    assert sorted(o["metadata"]["name"] for o in watcher.store.list()) == ["a", "b"]

    api.create(ingresses, "default", ingress("c", "c.example", "c"))
    await pause()
    changed = ingress("a", "a2.example", "a")
    api.update(ingresses, "default", "a", {**api.get(ingresses, "default", "a"), "spec": changed["spec"]})
    await pause()
    api.delete(ingresses, "default", "b")
    await pause()
    counts = [(e.created, e.modified, e.deleted) for e in out.drain() if isinstance(e, ResourceIndexUpdated)]
    assert counts == [(1, 0, 0), (0, 1, 0), (0, 0, 1)]
    assert sorted(o["metadata"]["name"] for o in watcher.store.list()) == ["a", "c"]
    await watcher.stop()
