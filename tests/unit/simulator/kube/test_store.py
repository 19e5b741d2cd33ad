"""Semantics of the fake Kubernetes API store, through the in-process ``KubeAPI`` adapter."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from haptic.k8s.api import (
    ApiError,
    Conflict,
    Gone,
    Invalid,
    KubeAPI,
    NotFound,
    ResourceRef,
    Selectors,
    WatchOptions,
)
from simulator.kube import FakeKubeAPI, InProcessKubeClient, apply_fault, load_yaml

CM = ResourceRef("v1", "configmaps")
SVC = ResourceRef("v1", "services")
NS = ResourceRef("v1", "namespaces", namespaced=False)
DEPLOY = ResourceRef("apps/v1", "deployments")
# What every Deployment needs (a selector its pod template matches, a container with an image).
POD_TEMPLATE = {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "c:1"}]}}
DEPLOY_SPEC = {"selector": {"matchLabels": {"app": "d"}}, "template": POD_TEMPLATE}
CRD = ResourceRef("apiextensions.k8s.io/v1", "customresourcedefinitions", namespaced=False)
WIDGET = ResourceRef("example.com/v1", "widgets")
WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}}}]},
}


@pytest.fixture
def api() -> FakeKubeAPI:
    return FakeKubeAPI()


@pytest.fixture
def kube(api: FakeKubeAPI) -> InProcessKubeClient:
    return InProcessKubeClient(api)


def cm(name: str, labels: dict[str, str] | None = None, **data: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels or {}}, "data": data}


async def collect(stream: Any, count: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    async for event in stream:
        out.append((event.type, event.object.get("metadata", {}).get("name", "")))
        if len(out) == count:
            break
    return out


def test_adapter_satisfies_the_port(kube: InProcessKubeClient) -> None:
    assert isinstance(kube, KubeAPI)


async def test_create_sets_metadata_and_bumps_one_global_version(kube: InProcessKubeClient) -> None:
    first = await kube.create(CM, cm("a", k="v"), "default")
    svc = await kube.create(SVC, {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}, "default")
    meta = first["metadata"]
    assert "generation" not in meta, "ConfigMaps carry no generation"
    assert meta["uid"] and meta["creationTimestamp"].endswith("Z")
    assert int(svc["metadata"]["resourceVersion"]) == int(meta["resourceVersion"]) + 1
    assert (first["apiVersion"], first["kind"], meta["namespace"]) == ("v1", "ConfigMap", "default")
    with pytest.raises(Conflict) as info:
        await kube.create(CM, cm("a"), "default")
    assert info.value.reason == "AlreadyExists"
    generated = await kube.create(CM, {"metadata": {"generateName": "gen-"}}, "default")
    assert generated["metadata"]["name"].startswith("gen-") and len(generated["metadata"]["name"]) == 9


@pytest.mark.looptime
async def test_same_seed_gives_identical_objects() -> None:
    # Under virtual time: creationTimestamp is the loop clock on a fixed epoch. On a real loop the two
    # runs straddled a second boundary now and then, and their timestamps differed (the flake).
    async def run() -> list[Any]:
        kube = InProcessKubeClient(FakeKubeAPI(seed=7))
        return [await kube.create(CM, {"metadata": {"generateName": "x-"}}, "default") for _ in range(3)]

    assert await run() == await run()


async def test_deleting_bumps_version_and_unknown_things_are_not_found(kube: InProcessKubeClient,
                                                                       api: FakeKubeAPI) -> None:
    await kube.create(CM, cm("a"), "default")
    before = api.resource_version
    assert await kube.delete(CM, "a", "default") is None
    assert api.resource_version == before + 1
    with pytest.raises(NotFound):
        await kube.get(CM, "a", "default")
    with pytest.raises(NotFound):
        await kube.list(ResourceRef("v1", "frobnicators"))
    with pytest.raises(NotFound, match="namespaces \"nope\" not found"):
        await kube.create(CM, cm("b"), "nope")


async def test_update_needs_the_current_version(kube: InProcessKubeClient, api: FakeKubeAPI) -> None:
    obj = await kube.create(CM, cm("a", k="1"), "default")
    fresh = await kube.replace(CM, {**obj, "data": {"k": "2"}})
    with pytest.raises(Conflict, match="has been modified"):
        await kube.replace(CM, {**obj, "data": {"k": "3"}})
    assert (await kube.get(CM, "a", "default"))["data"] == {"k": "2"}
    rv = api.resource_version
    same = await kube.replace(CM, fresh)
    assert same["metadata"]["resourceVersion"] == fresh["metadata"]["resourceVersion"]
    assert api.resource_version == rv, "a no-op update writes nothing"


async def test_status_subresource_isolation_and_generation(kube: InProcessKubeClient) -> None:
    body = {"metadata": {"name": "d"}, "spec": {**DEPLOY_SPEC, "replicas": 1}, "status": {"replicas": 9}}
    created = await kube.create(DEPLOY, body, "default")
    assert created["status"] == {}, "status is ignored on create for types with a status subresource"
    status = await kube.replace_status(DEPLOY, {**created, "status": {"replicas": 1}, "spec": {"replicas": 5},
                                                "metadata": {**created["metadata"], "labels": {"x": "y"}}})
    assert status["status"] == {"replicas": 1}
    assert status["spec"] == created["spec"] and "labels" not in status["metadata"]
    assert status["metadata"]["generation"] == 1
    spec = await kube.patch(DEPLOY, "d", {"spec": {"replicas": 3}, "status": {"replicas": 0}}, namespace="default")
    assert spec["metadata"]["generation"] == 2 and spec["status"] == {"replicas": 1}
    labelled = await kube.patch(DEPLOY, "d", {"metadata": {"labels": {"a": "b"}}}, namespace="default")
    assert labelled["metadata"]["generation"] == 2
    patched_status = await kube.patch(DEPLOY, "d", {"status": {"readyReplicas": 3}}, namespace="default",
                                      subresource="status")
    assert patched_status["status"] == {"replicas": 1, "readyReplicas": 3}
    with pytest.raises(NotFound):
        await kube.patch(CM, "x", {"status": {}}, namespace="default", subresource="status")


async def test_merge_json_and_strategic_patches(kube: InProcessKubeClient, api: FakeKubeAPI) -> None:
    await kube.create(CM, cm("a", x="1", y="2"), "default")
    merged = await kube.patch(CM, "a", {"data": {"x": None, "z": "3"}}, namespace="default")
    assert merged["data"] == {"y": "2", "z": "3"}
    rv = api.resource_version
    with pytest.raises(Invalid):
        await kube.patch(CM, "a", [{"op": "test", "path": "/data/y", "value": "nope"},
                                   {"op": "remove", "path": "/data/y"}], "json", namespace="default")
    assert api.resource_version == rv and (await kube.get(CM, "a", "default"))["data"]["y"] == "2"
    version = merged["metadata"]["resourceVersion"]
    done = await kube.patch(CM, "a", [{"op": "test", "path": "/metadata/resourceVersion", "value": version},
                                      {"op": "add", "path": "/data/w", "value": "4"}], "json", namespace="default")
    assert done["data"]["w"] == "4"

    containers = [{"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]}, {"name": "b", "image": "b:1"}]
    await kube.create(DEPLOY, {"metadata": {"name": "d"}, "spec": {**DEPLOY_SPEC, "template": {
        "metadata": POD_TEMPLATE["metadata"], "spec": {"containers": containers}}}}, "default")
    patch = {"spec": {"template": {"spec": {"containers": [
        {"name": "a", "env": [{"name": "Y", "value": "2"}]}, {"name": "b", "$patch": "delete"},
        {"name": "c", "image": "c:1"}]}}}}
    result = await kube.patch(DEPLOY, "d", patch, "strategic", namespace="default")
    got = result["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in got] == ["a", "c"]
    assert got[0]["image"] == "a:1" and got[0]["env"] == [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]

    await kube.create(CRD, WIDGET_CRD)
    await kube.create(WIDGET, {"metadata": {"name": "w"}, "spec": {}}, "default")
    with pytest.raises(ApiError) as info:
        await kube.patch(WIDGET, "w", {"spec": {"a": 1}}, "strategic", namespace="default")
    assert info.value.code == 415


async def test_server_side_apply_ownership(kube: InProcessKubeClient) -> None:
    def applied(**data: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": data}

    created = await kube.patch(CM, "a", applied(x="1", y="1"), "apply", "default", field_manager="one")
    assert created["data"] == {"x": "1", "y": "1"}
    assert created["metadata"]["managedFields"][0]["fieldsV1"] == {"f:data": {"f:x": {}, "f:y": {}}}
    shared = await kube.patch(CM, "a", applied(x="1"), "apply", "default", field_manager="two")
    assert shared["data"] == {"x": "1", "y": "1"}, "same value: no conflict, the field is shared"
    with pytest.raises(Conflict) as info:
        await kube.patch(CM, "a", applied(x="2"), "apply", "default", field_manager="two")
    assert info.value.details["causes"][0]["field"] == ".data.x"
    forced = await kube.patch(CM, "a", applied(x="2"), "apply", "default", field_manager="two", force=True)
    assert forced["data"] == {"x": "2", "y": "1"}
    dropped = await kube.patch(CM, "a", applied(x="1"), "apply", "default", field_manager="one", force=True)
    assert dropped["data"] == {"x": "1"}, "a field its only manager stops applying is removed"
    with pytest.raises(Invalid, match="fieldManager"):
        await kube.patch(CM, "a", applied(), "apply", "default")


async def test_finalizers_delay_deletion(kube: InProcessKubeClient) -> None:
    await kube.create(CM, {"metadata": {"name": "a", "finalizers": ["x/y"]}}, "default")
    pending = await kube.delete(CM, "a", "default")
    assert pending is not None and pending["metadata"]["deletionTimestamp"]
    with pytest.raises(Invalid, match="no new finalizers"):
        await kube.patch(CM, "a", {"metadata": {"finalizers": ["x/y", "z/w"]}}, namespace="default")
    await kube.patch(CM, "a", {"metadata": {"finalizers": None}}, namespace="default")
    with pytest.raises(NotFound):
        await kube.get(CM, "a", "default")


async def test_namespace_deletion_cascades(kube: InProcessKubeClient) -> None:
    await kube.create(NS, {"metadata": {"name": "team"}})
    await kube.create(CM, cm("a"), "team")
    await kube.create(CM, {"metadata": {"name": "held", "finalizers": ["f/f"]}}, "team")
    terminating = await kube.delete(NS, "team")
    assert terminating is not None and terminating["status"]["phase"] == "Terminating"
    assert [o["metadata"]["name"] for o in (await kube.list(CM, "team")).items] == ["held"]
    with pytest.raises(ApiError) as info:
        await kube.create(CM, cm("late"), "team")
    assert info.value.code == 403
    await kube.patch(CM, "held", {"metadata": {"finalizers": []}}, namespace="team")
    with pytest.raises(NotFound):
        await kube.get(NS, "team")


async def test_selectors(kube: InProcessKubeClient) -> None:
    await kube.create(CM, cm("a", {"app": "web", "tier": "front"}), "default")
    await kube.create(CM, cm("b", {"app": "db"}), "default")
    await kube.create(CM, cm("c"), "kube-system")

    async def names(label: str | None = None, fields: str | None = None, namespace: str | None = None) -> list[str]:
        result = await kube.list(CM, namespace, Selectors(label, fields))
        return [o["metadata"]["name"] for o in result.items]

    assert await names("app=web") == ["a"]
    assert await names("app==db") == ["b"]
    assert await names("app!=web") == ["b", "c"]
    assert await names("app in (web,db)") == ["a", "b"]
    assert await names("app notin (web)") == ["b", "c"]
    assert await names("tier") == ["a"]
    assert await names("!tier") == ["b", "c"]
    assert await names("app,!tier") == ["b"]
    assert await names(fields="metadata.name=b") == ["b"]
    assert await names(fields="metadata.namespace!=default") == ["c"]
    assert await names(namespace="kube-system") == ["c"]
    with pytest.raises(ApiError) as info:
        await names("app in web")
    assert info.value.code == 400


async def test_pages_are_a_consistent_snapshot(kube: InProcessKubeClient, api: FakeKubeAPI) -> None:
    for i in range(5):
        await kube.create(CM, cm(f"cm{i}"), "default")
    page = await kube.list(CM, "default", limit=2)
    assert [o["metadata"]["name"] for o in page.items] == ["cm0", "cm1"] and page.continue_token
    await kube.delete(CM, "cm2", "default")
    await kube.create(CM, cm("cm25"), "default")
    names: list[str] = []
    token = page.continue_token
    while token:
        page2 = await kube.list(CM, "default", limit=2, continue_token=token)
        assert page2.resource_version == page.resource_version
        names += [o["metadata"]["name"] for o in page2.items]
        token = page2.continue_token
    assert names == ["cm2", "cm3", "cm4"]
    api.compact()
    with pytest.raises(Gone):
        await kube.list(CM, "default", limit=2, continue_token=page.continue_token)


async def test_watch_after_version_with_selector_transitions(kube: InProcessKubeClient) -> None:
    await kube.create(CM, cm("a", {"app": "web"}), "default")
    listed = await kube.list(CM)
    options = WatchOptions(resource_version=listed.resource_version, selectors=Selectors("app=web"))
    await kube.create(CM, cm("b", {"app": "web"}), "default")
    await kube.patch(CM, "a", {"metadata": {"labels": {"app": "db"}}}, namespace="default")
    await kube.patch(CM, "a", {"data": {"x": "1"}}, namespace="default")
    await kube.patch(CM, "a", {"metadata": {"labels": {"app": "web"}}}, namespace="default")
    await kube.patch(CM, "b", {"data": {"x": "1"}}, namespace="default")
    await kube.delete(CM, "b", "default")
    events = await collect(kube.watch(CM, "default", options), 5)
    assert events == [("ADDED", "b"), ("DELETED", "a"), ("ADDED", "a"), ("MODIFIED", "b"), ("DELETED", "b")]


async def test_watch_from_compacted_version_gets_410(kube: InProcessKubeClient, api: FakeKubeAPI) -> None:
    await kube.create(CM, cm("a"), "default")
    old = (await kube.list(CM)).resource_version
    await kube.create(CM, cm("b"), "default")
    api.compact()
    events = [e async for e in kube.watch(CM, None, WatchOptions(resource_version=old))]
    assert len(events) == 1 and events[0].type == "ERROR" and events[0].object["code"] == 410
    fresh = (await kube.list(CM)).resource_version
    stream = kube.watch(CM, None, WatchOptions(resource_version=fresh))
    task = asyncio.ensure_future(collect(stream, 1))
    await asyncio.sleep(0)
    await kube.create(CM, cm("c"), "default")
    assert await task == [("ADDED", "c")]


async def test_watch_without_version_starts_with_current_objects(kube: InProcessKubeClient) -> None:
    await kube.create(CM, cm("b"), "default")
    await kube.create(CM, cm("a"), "default")
    assert await collect(kube.watch(CM, "default", WatchOptions()), 2) == [("ADDED", "a"), ("ADDED", "b")]


async def test_watchers_receive_events_in_the_same_order(kube: InProcessKubeClient) -> None:
    rv = (await kube.list(CM)).resource_version
    tasks = [asyncio.ensure_future(collect(kube.watch(CM, None, WatchOptions(resource_version=rv)), 20))
             for _ in range(3)]
    await asyncio.sleep(0)
    for i in range(10):
        await kube.create(CM, cm(f"c{i}"), "default")
        await kube.patch(CM, f"c{i}", {"data": {"i": str(i)}}, namespace="default")
    results = await asyncio.gather(*tasks)
    assert results[0] == results[1] == results[2]
    assert results[0][:2] == [("ADDED", "c0"), ("MODIFIED", "c0")]


@pytest.mark.looptime
async def test_watch_timeout_and_bookmarks_follow_the_loop_clock() -> None:
    kube = InProcessKubeClient(FakeKubeAPI(bookmark_interval=10))
    loop = asyncio.get_running_loop()
    start = loop.time()
    rv = (await kube.list(CM)).resource_version
    events = [e async for e in kube.watch(CM, None, WatchOptions(resource_version=rv, timeout_seconds=35))]
    assert [e.type for e in events] == ["BOOKMARK"] * 3
    assert events[0].object["metadata"]["resourceVersion"] == rv
    assert loop.time() - start == 35


async def test_dropped_streams_end(kube: InProcessKubeClient, api: FakeKubeAPI) -> None:
    rv = (await kube.list(CM)).resource_version
    task = asyncio.ensure_future(collect(kube.watch(CM, None, WatchOptions(resource_version=rv)), 10))
    await asyncio.sleep(0)
    await kube.create(CM, cm("a"), "default")
    await asyncio.sleep(0)
    assert api.drop_watches() == 1
    assert await task == [("ADDED", "a")]
    assert api.watcher_count() == 0


async def test_crd_registers_and_removes_a_type(kube: InProcessKubeClient, api: FakeKubeAPI) -> None:
    with pytest.raises(NotFound):
        await kube.list(WIDGET)
    await kube.create(CRD, WIDGET_CRD)
    await kube.create(WIDGET, {"metadata": {"name": "w"}, "spec": {"size": 1}}, "default")
    assert [o["metadata"]["name"] for o in (await kube.list(WIDGET)).items] == ["w"]
    await kube.delete(CRD, "widgets.example.com")
    with pytest.raises(NotFound):
        await kube.list(WIDGET)
    with pytest.raises(Invalid, match="plural"):
        await kube.create(CRD, {**WIDGET_CRD, "metadata": {"name": "wrong.example.com"}})


@pytest.mark.looptime
async def test_faults_follow_the_loop_clock(kube: InProcessKubeClient, api: FakeKubeAPI) -> None:
    loop = asyncio.get_running_loop()
    api.faults.outage(30)
    with pytest.raises(ApiError) as info:
        await kube.list(CM)
    assert info.value.code == 503
    await asyncio.sleep(30)
    await kube.list(CM)
    api.faults.throttle(5, retry_after=2)
    with pytest.raises(ApiError) as info:
        await kube.get(NS, "default")
    assert info.value.code == 429 and info.value.retry_after == 2
    await asyncio.sleep(5)
    api.faults.inject_conflicts("configmaps", 2)
    for _ in range(2):
        with pytest.raises(Conflict):
            await kube.create(CM, cm("a"), "default")
    await kube.create(CM, cm("a"), "default")
    api.faults.add_latency(3)
    start = loop.time()
    await kube.get(CM, "a", "default")
    assert loop.time() - start == 3
    api.faults.clear()
    rv = (await kube.list(CM)).resource_version
    stream = kube.watch(CM, None, WatchOptions(resource_version=rv))
    watching = asyncio.ensure_future(collect(stream, 1))
    await asyncio.sleep(0)
    api.refuse_connections(1)
    assert await watching == [], "a server going down cuts open watches"
    with pytest.raises(ApiError, match="connection refused"):
        await kube.get(CM, "a", "default")
    await asyncio.sleep(1)
    await kube.get(CM, "a", "default")


async def test_results_are_copies(kube: InProcessKubeClient) -> None:
    got = await kube.create(CM, cm("a", k="v"), "default")
    got["data"]["k"] = "changed"
    assert (await kube.get(CM, "a", "default"))["data"] == {"k": "v"}


def test_load_yaml_orders_crds_and_namespaces_first(api: FakeKubeAPI, tmp_path: Any) -> None:
    text = """
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: shop}
status: {ready: true}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, kind: Widget}
  versions: [{name: v1, served: true, storage: true, subresources: {status: {}}}]
"""
    path = tmp_path / "objects.yaml"
    path.write_text(text)
    created = load_yaml(api, str(path))
    assert [o["kind"] for o in created] == ["Namespace", "CustomResourceDefinition", "Widget"]
    assert created[2]["status"] == {"ready": True}
    with pytest.raises(ApiError, match="Gadget"):
        load_yaml(api, "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n")


async def test_garbage_collection_follows_owner_references(kube: InProcessKubeClient) -> None:
    owner = await kube.create(CM, cm("owner"), "default")
    other = await kube.create(CM, cm("other"), "default")

    def ref(obj: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "name": obj["metadata"]["name"],
                "uid": obj["metadata"]["uid"]}

    await kube.create(CM, {"metadata": {"name": "child", "ownerReferences": [ref(owner)]}}, "default")
    await kube.create(CM, {"metadata": {"name": "shared", "ownerReferences": [ref(owner), ref(other)]}}, "default")
    await kube.create(CM, {"metadata": {"name": "held", "ownerReferences": [ref(owner)], "finalizers": ["f/f"]}},
                      "default")
    await kube.delete(CM, "owner", "default")
    names = [o["metadata"]["name"] for o in (await kube.list(CM, "default")).items]
    assert names == ["held", "other", "shared"]
    assert (await kube.get(CM, "held", "default"))["metadata"]["deletionTimestamp"]
    await kube.delete(CM, "other", "default")
    assert [o["metadata"]["name"] for o in (await kube.list(CM, "default")).items] == ["held"]


def test_orphan_propagation_keeps_dependents_and_detaches_them(api: FakeKubeAPI) -> None:
    rt = api.resolve("v1", "configmaps")
    owner = api.create(rt, "default", cm("owner"))
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    api.create(rt, "default", {"metadata": {"name": "child", "ownerReferences": [ref]}})
    api.delete(rt, "default", "owner", propagation="Orphan")
    assert "ownerReferences" not in api.get(rt, "default", "child")["metadata"]


def test_exact_list_and_partial_compaction(api: FakeKubeAPI) -> None:
    rt = api.resolve("v1", "configmaps")
    api.create(rt, "default", cm("a", k="1"))
    first = api.resource_version
    api.patch(rt, "default", "a", "merge", {"data": {"k": "2"}})
    api.create(rt, "default", cm("b"))
    second = api.resource_version
    api.delete(rt, "default", "a")
    past = api.list(rt, resource_version=str(first), resource_version_match="Exact")
    assert [(o["metadata"]["name"], o["data"]) for o in past.items] == [("a", {"k": "1"})]
    assert past.resource_version == str(first)
    assert [o["metadata"]["name"] for o in api.list(rt, resource_version=str(second),
                                                      resource_version_match="Exact").items] == ["a", "b"]
    assert api.compact(second) == second
    with pytest.raises(Gone):
        api.list(rt, resource_version=str(first), resource_version_match="Exact")
    gone = list_events(api.watch(rt, resource_version=str(first)))
    assert gone[0][0] == "ERROR"
    assert list_events(api.watch(rt, resource_version=str(second))) == [("DELETED", "a")]


def list_events(watch: Any) -> list[tuple[str, str]]:
    out = [(etype, obj.get("metadata", {}).get("name", "")) for etype, obj in watch.drain()]
    watch.close()
    return out


async def test_secret_string_data_and_service_defaults(kube: InProcessKubeClient) -> None:
    secret_ref = ResourceRef("v1", "secrets")
    secret = await kube.create(secret_ref, {"metadata": {"name": "tls"}, "stringData": {"key": "pem"}}, "default")
    assert secret["data"] == {"key": "cGVt"} and "stringData" not in secret and secret["type"] == "Opaque"
    with pytest.raises(ApiError) as info:
        await kube.create(secret_ref, {"metadata": {"name": "bad"}, "data": {"key": "not base64!"}}, "default")
    assert info.value.code == 400 and "not base64!" not in info.value.message
    patched = await kube.patch(secret_ref, "tls", {"stringData": {"other": "x"}}, namespace="default")
    assert patched["data"] == {"key": "cGVt", "other": "eA=="}

    first = await kube.create(SVC, {"metadata": {"name": "a"}, "spec": {"ports": [{"port": 80}]}}, "default")
    second = await kube.create(SVC, {"metadata": {"name": "b"}, "spec": {"ports": [{"port": 81}]}}, "default")
    spec = first["spec"]
    assert spec["type"] == "ClusterIP" and spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert (spec["clusterIP"], second["spec"]["clusterIP"]) == ("10.96.0.2", "10.96.0.3")
    replaced = await kube.replace(SVC, {**first, "spec": {"ports": [{"port": 8080}]}})
    assert replaced["spec"]["clusterIP"] == "10.96.0.2"
    with pytest.raises(Invalid, match="may not change once set"):
        await kube.patch(SVC, "a", {"spec": {"clusterIP": "10.96.9.9"}}, namespace="default")


def test_apply_object_creates_updates_and_sets_status(api: FakeKubeAPI) -> None:
    ingress = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
               "metadata": {"name": "web", "namespace": "default"},
               "spec": {"rules": [{"host": "a.example"}]},
               "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}}
    created = api.apply_object(ingress)
    assert created["status"]["loadBalancer"]["ingress"] == [{"ip": "10.0.0.1"}]
    updated = api.apply_object({**ingress, "spec": {"rules": [{"host": "b.example"}]}})
    assert updated["spec"]["rules"] == [{"host": "b.example"}] and updated["metadata"]["generation"] == 2
    assert api.delete_object("networking.k8s.io/v1", "Ingress", "web", "default") is None
    with pytest.raises(NotFound):
        api.apply_object({"apiVersion": "example.com/v1", "kind": "Nope", "metadata": {"name": "x"}})


def test_load_errors_name_the_source_and_object(api: FakeKubeAPI, tmp_path: Any) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n")
    with pytest.raises(Invalid) as info:
        load_yaml(api, path)
    assert str(path) in str(info.value) and "ConfigMap 'Bad_Name'" in str(info.value)


@pytest.mark.looptime
async def test_faults_as_data(kube: InProcessKubeClient, api: FakeKubeAPI) -> None:
    assert apply_fault(api, {"fault": "throttle", "seconds": 4, "retryAfter": 2})["throttle"] == 4
    with pytest.raises(ApiError) as info:
        await kube.list(CM)
    assert (info.value.code, info.value.retry_after) == (429, 2)
    apply_fault(api, {"fault": "clear"})
    apply_fault(api, {"fault": "conflicts", "resource": "configmaps"})
    with pytest.raises(Conflict):
        await kube.create(CM, cm("a"), "default")
    with pytest.raises(ApiError) as info:
        apply_fault(api, {"fault": "outage", "seconds": -1})
    assert info.value.code == 400 and "seconds" in info.value.message
    with pytest.raises(NotFound, match="outage"):
        apply_fault(api, {"fault": "meteor"})


def test_apply_merges_list_items_by_key_across_managers(api: FakeKubeAPI) -> None:
    rt = api.resolve("apps/v1", "deployments")

    def deployment(*containers: str, replicas: int | None = None) -> dict[str, Any]:
        spec: dict[str, Any] = {"selector": DEPLOY_SPEC["selector"], "template": {
            "metadata": POD_TEMPLATE["metadata"], "spec": {"containers": [{"name": n, "image": f"{n}:1"}
                                                                          for n in containers]}}}
        if replicas:
            spec["replicas"] = replicas
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": spec}

    api.patch(rt, "default", "d", "apply", deployment("a", replicas=2), None, "one")
    both = api.patch(rt, "default", "d", "apply", deployment("b"), None, "two")
    assert [c["name"] for c in both["spec"]["template"]["spec"]["containers"]] == ["a", "b"]
    assert both["spec"]["replicas"] == 2
    only_b = api.patch(rt, "default", "d", "apply", deployment(), None, "one")
    assert [c["name"] for c in only_b["spec"]["template"]["spec"]["containers"]] == ["b"]
    assert only_b["spec"]["replicas"] == 1  # no manager sets it any more: the default again
    owners = {m["manager"]: m["fieldsV1"] for m in only_b["metadata"]["managedFields"]}
    assert 'k:{"name":"b"}' in owners["two"]["f:spec"]["f:template"]["f:spec"]["f:containers"]


def test_forced_apply_takes_only_the_conflicting_fields(api: FakeKubeAPI) -> None:
    rt = api.resolve("v1", "configmaps")

    def applied(**data: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": data}

    api.patch(rt, "default", "a", "apply", applied(x="1", y="1"), None, "one")
    forced = api.patch(rt, "default", "a", "apply", applied(x="2", y="1"), None, "two", force=True)
    owners = {m["manager"]: set(m["fieldsV1"]["f:data"]) for m in forced["metadata"]["managedFields"]}
    assert owners == {"one": {"f:y"}, "two": {"f:x", "f:y"}}


@pytest.mark.parametrize("labels", [{"bad key": "v"}, {"k": "-leading"}, {"k": "x" * 64}, {"Example.com/k": "v"}])
async def test_invalid_labels_are_422(kube: InProcessKubeClient, labels: dict[str, str]) -> None:
    with pytest.raises(Invalid, match=r"metadata\.labels"):
        await kube.create(CM, cm("a", labels), "default")


async def test_valid_labels_pass(kube: InProcessKubeClient) -> None:
    labels = {"example.com/role": "edge", "a_b.c-d": "", "k": "V_1.x"}
    assert (await kube.create(CM, cm("a", labels), "default"))["metadata"]["labels"] == labels


async def test_gateway_types_are_served_only_once_their_crds_are_installed(
        kube: InProcessKubeClient, api: FakeKubeAPI) -> None:
    # A real API server knows nothing of gateway.networking.k8s.io before the Gateway API CRDs are applied.
    route = ResourceRef("gateway.networking.k8s.io/v1", "httproutes")
    with pytest.raises(NotFound, match="httproutes"):
        await kube.create(route, {"metadata": {"name": "r"}, "spec": {"hostnames": ["a.example"]}}, "default")
    assert "gateway.networking.k8s.io" not in api.types.groups()
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "httproutes.gateway.networking.k8s.io"},
           "spec": {"group": "gateway.networking.k8s.io", "scope": "Namespaced",
                    "names": {"plural": "httproutes", "kind": "HTTPRoute", "shortNames": ["hr"]},
                    "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                                  "schema": {"openAPIV3Schema": {
                                      "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    await kube.create(CRD, crd)
    assert api.resolve("gateway.networking.k8s.io/v1", "httproutes").short_names == ("hr",)
    await kube.create(route, {"metadata": {"name": "r"}, "spec": {"hostnames": ["a.example"]}}, "default")
    with pytest.raises(ApiError) as info:
        await kube.patch(route, "r", {"spec": {"hostnames": ["b"]}}, "strategic", namespace="default")
    assert info.value.code == 415, "a custom resource takes no strategic merge patch"
