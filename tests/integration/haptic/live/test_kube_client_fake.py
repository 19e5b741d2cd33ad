"""The live adapter (kubernetes.aio + raw REST) against the simulator's HTTP fake API on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from haptic.core import RealClock
from haptic.k8s.api import Conflict, Gone, Invalid, NotFound, ResourceRef, Selectors, Unavailable, WatchOptions
from haptic.k8s.leaderelection import ElectionConfig, LeaderElector, Transition
from haptic.live.kube_client import LiveKubeAPI, connect
from simulator.kube import FakeKubeAPI, KubeHTTPServer

CONFIGMAPS = ResourceRef("v1", "configmaps", kind="ConfigMap")
DEPLOYMENTS = ResourceRef("apps/v1", "deployments", kind="Deployment")
CLASSES = ResourceRef("networking.k8s.io/v1", "ingressclasses", namespaced=False, kind="IngressClass")


def configmap(name: str, labels: dict[str, str] | None = None, data: dict[str, str] | None = None) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels or {}},
            "data": data or {}}


@pytest.fixture
async def fake() -> AsyncIterator[tuple[FakeKubeAPI, KubeHTTPServer]]:
    store = FakeKubeAPI()
    server = KubeHTTPServer(store)
    await server.start()
    yield store, server
    await server.stop()


@pytest.fixture
async def live(fake: tuple[FakeKubeAPI, KubeHTTPServer]) -> AsyncIterator[LiveKubeAPI]:
    api = await connect(host=fake[1].url)
    yield api
    await api.close()


async def test_create_get_list_with_selectors_and_pages(live: LiveKubeAPI) -> None:
    for i in range(3):
        await live.create(CONFIGMAPS, configmap(f"cm{i}", {"app": "web" if i < 2 else "db"}), "default")
    got = await live.get(CONFIGMAPS, "cm1", "default")
    assert got["metadata"]["labels"] == {"app": "web"}
    page = await live.list(CONFIGMAPS, "default", Selectors(label_selector="app=web"))
    assert sorted(o["metadata"]["name"] for o in page.items) == ["cm0", "cm1"]
    assert all(o["kind"] == "ConfigMap" and o["apiVersion"] == "v1" for o in page.items)
    names = []
    token = None
    while True:
        chunk = await live.list(CONFIGMAPS, "default", limit=1, continue_token=token)
        names += [o["metadata"]["name"] for o in chunk.items]
        token = chunk.continue_token
        if token is None:
            break
    assert names == ["cm0", "cm1", "cm2"]
    selected = await live.list(CONFIGMAPS, None, Selectors(field_selector="metadata.name=cm2"))
    assert [o["metadata"]["name"] for o in selected.items] == ["cm2"]
    with pytest.raises(NotFound):
        await live.get(CONFIGMAPS, "nope", "default")


async def test_cluster_scoped_create_and_delete(live: LiveKubeAPI) -> None:
    body = {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "haproxy"},
            "spec": {"controller": "haproxy-haptic.org/controller"}}
    created = await live.create(CLASSES, body)
    assert created["metadata"]["name"] == "haproxy"
    assert await live.delete(CLASSES, "haproxy") is None
    with pytest.raises(NotFound):
        await live.get(CLASSES, "haproxy")
    held = dict(body, metadata={"name": "held", "finalizers": ["haptic.test/hold"]})
    await live.create(CLASSES, held)
    pending = await live.delete(CLASSES, "held")
    assert pending is not None and pending["metadata"]["deletionTimestamp"]
    assert (await live.get(CLASSES, "held"))["metadata"]["finalizers"] == ["haptic.test/hold"]


async def test_watch_from_a_resource_version_sees_only_later_changes(live: LiveKubeAPI) -> None:
    await live.create(CONFIGMAPS, configmap("before"), "default")
    listed = await live.list(CONFIGMAPS, "default")
    await live.create(CONFIGMAPS, configmap("after"), "default")
    await live.patch(CONFIGMAPS, "after", {"data": {"k": "v"}}, "merge", namespace="default")
    await live.delete(CONFIGMAPS, "before", "default")
    seen = []
    options = WatchOptions(resource_version=listed.resource_version, allow_bookmarks=False)
    async with contextlib.aclosing(live.watch(CONFIGMAPS, "default", options)) as stream:
        async for event in stream:
            seen.append((event.type, event.object["metadata"]["name"]))
            if len(seen) == 3:
                break
    assert seen == [("ADDED", "after"), ("MODIFIED", "after"), ("DELETED", "before")]


async def test_watch_from_a_compacted_version_yields_410_error(
    fake: tuple[FakeKubeAPI, KubeHTTPServer], live: LiveKubeAPI
) -> None:
    store, server = fake
    await live.create(CONFIGMAPS, configmap("a"), "default")
    old = (await live.list(CONFIGMAPS, "default")).resource_version
    await live.patch(CONFIGMAPS, "a", {"data": {"x": "1"}}, namespace="default")
    store.compact()
    events = [e async for e in live.watch(CONFIGMAPS, "default", WatchOptions(resource_version=old))]
    assert [e.type for e in events] == ["ERROR"]
    assert events[0].object["code"] == 410
    await live.create(CONFIGMAPS, configmap("b"), "default")
    page = await live.list(CONFIGMAPS, "default", limit=1)
    assert page.continue_token is not None
    await live.patch(CONFIGMAPS, "b", {"data": {"y": "2"}}, namespace="default")
    store.compact()
    with pytest.raises(Gone):  # a continue token from before the compaction
        await live.list(CONFIGMAPS, "default", limit=1, continue_token=page.continue_token)
    raising = await connect(host=server.url, watch_errors="raise")
    try:
        with pytest.raises(Gone):
            [e async for e in raising.watch(CONFIGMAPS, "default", WatchOptions(resource_version=old))]
    finally:
        await raising.close()


async def test_stale_resource_version_and_existing_name_are_conflicts(live: LiveKubeAPI) -> None:
    created = await live.create(CONFIGMAPS, configmap("cm"), "default")
    fresh = dict(created, data={"v": "1"})
    await live.replace(CONFIGMAPS, fresh)
    stale = dict(created, data={"v": "2"})  # still carries the first resourceVersion
    with pytest.raises(Conflict):
        await live.replace(CONFIGMAPS, stale)
    with pytest.raises(Conflict) as exists:
        await live.create(CONFIGMAPS, configmap("cm"), "default")
    assert exists.value.reason == "AlreadyExists"


async def test_server_side_apply_creates_conflicts_and_forces(live: LiveKubeAPI) -> None:
    await live.patch(CONFIGMAPS, "ssa", configmap("ssa", data={"owner": "a"}), "apply", namespace="default",
                     field_manager="manager-a")
    got = await live.get(CONFIGMAPS, "ssa", "default")
    assert got["data"] == {"owner": "a"}
    assert [m["manager"] for m in got["metadata"]["managedFields"]] == ["manager-a"]
    with pytest.raises(Conflict):
        await live.patch(CONFIGMAPS, "ssa", configmap("ssa", data={"owner": "b"}), "apply", namespace="default",
                         field_manager="manager-b")
    forced = await live.patch(CONFIGMAPS, "ssa", configmap("ssa", data={"owner": "b"}), "apply",
                              namespace="default", field_manager="manager-b", force=True)
    assert forced["data"] == {"owner": "b"}


async def test_status_subresource_writes_only_status(live: LiveKubeAPI) -> None:
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}
    created = await live.create(DEPLOYMENTS, body, "default")
    generation = created["metadata"]["generation"]
    update = dict(created, status={"replicas": 1}, spec=dict(created["spec"], replicas=5))
    stored = await live.replace_status(DEPLOYMENTS, update)
    assert stored["status"] == {"replicas": 1}
    assert stored["spec"]["replicas"] == 1  # the status endpoint ignores spec
    assert stored["metadata"]["generation"] == generation
    patched = await live.patch(DEPLOYMENTS, "web", {"status": {"readyReplicas": 1}}, "merge", namespace="default",
                               subresource="status")
    assert patched["status"] == {"replicas": 1, "readyReplicas": 1}


async def test_throttling_outage_and_invalid_requests_map_to_port_errors(
    fake: tuple[FakeKubeAPI, KubeHTTPServer], live: LiveKubeAPI
) -> None:
    store, _ = fake
    store.faults.throttle(30, retry_after=2)
    with pytest.raises(Unavailable) as throttled:
        await live.get(CONFIGMAPS, "x", "default")
    assert (throttled.value.code, throttled.value.retry_after) == (429, 2.0)
    store.faults.clear()
    store.faults.outage(30)
    with pytest.raises(Unavailable) as down:
        await live.list(CONFIGMAPS, "default")
    assert down.value.code == 503
    store.faults.clear()
    with pytest.raises(Invalid):
        await live.create(CONFIGMAPS, configmap("Not_A_DNS_Name"), "default")
    with pytest.raises(ValueError, match="field_manager"):  # refused before sending, as the server would
        await live.patch(CONFIGMAPS, "x", configmap("x"), "apply", namespace="default", field_manager="")


async def test_two_electors_over_http_hand_over_on_release(fake: tuple[FakeKubeAPI, KubeHTTPServer]) -> None:
    _, server = fake
    apis = [await connect(host=server.url) for _ in range(2)]
    clock = RealClock()
    electors = [
        LeaderElector(api, ElectionConfig("haptic-leader", "default", name, lease_duration=3, renew_deadline=2,
                                          retry_period=0.5), clock)
        for api, name in zip(apis, ("a", "b"), strict=True)
    ]
    log: list[tuple[str, str]] = []
    a_leads, b_sees_a, b_leads = asyncio.Event(), asyncio.Event(), asyncio.Event()

    def on_a(t: Transition) -> None:
        log.append(("a", t.kind))
        if t.kind == "became_leader":
            a_leads.set()

    def on_b(t: Transition) -> None:
        log.append(("b", t.kind))
        if t.kind == "new_leader" and t.holder == "a":
            b_sees_a.set()
        if t.kind == "became_leader":
            b_leads.set()

    electors[0].on_transition(on_a)
    electors[1].on_transition(on_b)
    tasks = [asyncio.create_task(electors[0].run())]
    await asyncio.wait_for(a_leads.wait(), timeout=10)
    tasks.append(asyncio.create_task(electors[1].run()))
    await asyncio.wait_for(b_sees_a.wait(), timeout=10)
    await electors[0].stop()
    await asyncio.wait_for(b_leads.wait(), timeout=10)
    lease = await apis[1].get(ResourceRef("coordination.k8s.io/v1", "leases"), "haptic-leader", "default")
    assert lease["spec"]["holderIdentity"] == "b"
    assert lease["spec"]["leaseTransitions"] == 1
    assert ("a", "became_leader") in log and ("a", "lost_leadership") in log
    assert log.index(("a", "lost_leadership")) < log.index(("b", "became_leader"))
    await electors[1].stop()
    await asyncio.gather(*tasks)
    for api in apis:
        await api.close()


async def test_watch_bookmarks_timeout_and_dropped_stream() -> None:
    store = FakeKubeAPI(bookmark_interval=0.2)
    server = KubeHTTPServer(store)
    await server.start()
    api = await connect(host=server.url)
    try:
        rv = (await api.list(CONFIGMAPS, "default")).resource_version
        # The server ends the stream after timeoutSeconds; bookmarks arrived meanwhile.
        events = [e async for e in api.watch(CONFIGMAPS, "default", WatchOptions(resource_version=rv,
                                                                                 timeout_seconds=1))]
        assert events and all(e.type == "BOOKMARK" for e in events)
        assert events[-1].object["metadata"]["resourceVersion"] == rv
        # A dropped connection simply ends the iteration (the caller re-watches from its last RV).
        seen: list[str] = []
        got_one = asyncio.Event()

        async def consume() -> None:
            options = WatchOptions(resource_version=rv, allow_bookmarks=False)
            async for event in api.watch(CONFIGMAPS, "default", options):
                seen.append(event.object["metadata"]["name"])
                got_one.set()

        task = asyncio.create_task(consume())
        await api.create(CONFIGMAPS, configmap("x"), "default")
        await asyncio.wait_for(got_one.wait(), timeout=5)
        store.drop_watches()
        await asyncio.wait_for(task, timeout=5)
        assert seen == ["x"]
    finally:
        await api.close()
        await server.stop()
