"""``ConfigPublisher`` on the bus: a validated render becomes the ``HAProxyCfg`` in the (fake) API, with
its status following validation failures and per-pod deployments."""

from __future__ import annotations

import asyncio

import pytest

from haptic.controller.context import HAPROXY_CFGS
from haptic.controller.events import (
    ConfigAppliedToPod,
    ConfigPublished,
    SyncMetadata,
    ValidationCompleted,
    ValidationFailed,
)
from haptic.controller.publish.content import decode_content
from haptic.controller.publish.publisher import ConfigPublisher
from haptic.core import EventBus
from haptic.dataplane.aux_files import AuxFiles
from haptic.k8s.api import JSON, ResourceRef
from simulator.kube import InProcessKubeClient
from tests.support.controller import NAMESPACE, fake_cluster, make_ctx, started_bus

pytestmark = pytest.mark.looptime

CONFIG = "global\n    daemon\n"
AUX = AuxFiles(maps={"hosts.map": "a.example web\n"}, certificates={"tls.pem": "----- key -----"})


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def published(kube: InProcessKubeClient, name: str) -> JSON:
    return await kube.get(HAPROXY_CFGS, name, NAMESPACE)


async def start_publisher() -> tuple[EventBus, ConfigPublisher, InProcessKubeClient]:
    _, kube = fake_cluster()
    bus = started_bus()
    publisher = ConfigPublisher(bus, make_ctx(kube=kube))
    await publisher.start()
    return bus, publisher, kube


async def test_validated_render_is_published_once_per_checksum() -> None:
    bus, publisher, kube = await start_publisher()
    out = bus.subscribe("out", types=(ConfigPublished,))
    name = publisher.ctx.runtime_config_name
    bus.publish(ValidationCompleted(content_checksum="c1", haproxy_config=CONFIG, auxiliary_files=AUX))
    await settle()
    cfg = await published(kube, name)
    assert decode_content(cfg["spec"]["content"], cfg["spec"]["compressed"]) == CONFIG
    assert cfg["spec"]["checksum"] == "c1"
    assert cfg["metadata"]["labels"] == {"haproxy-haptic.org/template-config": publisher.ctx.config_name}
    [event] = out.drain()
    assert isinstance(event, ConfigPublished)
    assert (event.map_file_count, event.secret_count) == (1, 1)

    version = cfg["metadata"]["resourceVersion"]
    bus.publish(ValidationCompleted(content_checksum="c1", haproxy_config=CONFIG, auxiliary_files=AUX))
    await settle()
    assert (await published(kube, name))["metadata"]["resourceVersion"] == version, "same checksum: no write"
    assert out.drain() == []
    await publisher.stop()


async def test_validation_failure_is_recorded_apart_and_cleared_by_the_next_success() -> None:
    bus, publisher, kube = await start_publisher()
    name = publisher.ctx.runtime_config_name
    bus.publish(ValidationCompleted(content_checksum="c1", haproxy_config=CONFIG, auxiliary_files=AuxFiles()))
    await settle()
    bus.publish(ValidationFailed(errors=("line 3: unknown keyword 'bogus'",), content_checksum="c2"))
    await settle()
    cfg = await published(kube, name)
    assert cfg["status"]["validationError"] == "line 3: unknown keyword 'bogus'"
    assert cfg["spec"]["checksum"] == "c1", "a failed render never replaces the published content"

    bus.publish(ValidationCompleted(content_checksum="c3", haproxy_config=CONFIG + "# 3\n",
                                    auxiliary_files=AuxFiles()))
    await settle()
    cfg = await published(kube, name)
    assert cfg["spec"]["checksum"] == "c3"
    assert cfg["status"].get("validationError") is None
    await publisher.stop()


async def test_pod_deployments_and_errors_land_in_the_status() -> None:
    bus, publisher, kube = await start_publisher()
    name = publisher.ctx.runtime_config_name
    bus.publish(ValidationCompleted(content_checksum="c1", haproxy_config=CONFIG, auxiliary_files=AuxFiles()))
    await settle()
    bus.publish(ConfigAppliedToPod(pod_name="haproxy-0", pod_namespace=NAMESPACE, checksum="c1",
                                   sync=SyncMetadata(reload_triggered=True, reload_id="r7")))
    bus.publish(ConfigAppliedToPod(pod_name="haproxy-1", pod_namespace=NAMESPACE, checksum="c1",
                                   sync=SyncMetadata(error="connection refused")))
    await settle()
    pods = {p["podName"]: p for p in (await published(kube, name))["status"]["deployedToPods"]}
    assert pods["haproxy-0"]["checksum"] == "c1"
    assert pods["haproxy-0"]["lastReloadID"] == "r7"
    assert pods["haproxy-1"]["lastError"] == "connection refused"
    assert pods["haproxy-1"]["consecutiveErrors"] == 1
    assert "checksum" not in pods["haproxy-1"]
    await publisher.stop()


async def test_pod_status_carries_the_sync_figures_and_the_conditions_follow_the_pods() -> None:
    bus, publisher, kube = await start_publisher()
    name = publisher.ctx.runtime_config_name
    bus.publish(ValidationCompleted(content_checksum="c1", haproxy_config=CONFIG, auxiliary_files=AuxFiles()))
    await settle()
    summary = {"totalAPIOperations": 3, "serversModified": 2, "backendsAdded": 1}
    bus.publish(ConfigAppliedToPod(pod_name="haproxy-0", pod_namespace=NAMESPACE, checksum="c1",
                                   sync=SyncMetadata(sync_duration_s=0.25, version_conflict_retries=2,
                                                     fallback_used=True, operation_counts=summary)))
    bus.publish(ConfigAppliedToPod(pod_name="haproxy-1", pod_namespace=NAMESPACE, checksum="c1",
                                   sync=SyncMetadata(error="connection refused")))
    await settle()
    status = (await published(kube, name))["status"]
    pod = next(p for p in status["deployedToPods"] if p["podName"] == "haproxy-0")
    assert (pod["syncDuration"], pod["versionConflictRetries"], pod["fallbackUsed"]) == ("0.250s", 2, True)
    written = pod["lastOperationSummary"]
    assert {k: v for k, v in written.items() if v} == summary  # the CRD's defaults fill in the zeros
    conditions = {c["type"]: c for c in status["conditions"]}
    assert (conditions["Synced"]["status"], conditions["Synced"]["reason"]) == ("False", "DeploymentFailed")
    assert "haproxy-1" in conditions["Synced"]["message"]
    assert conditions["Valid"]["status"] == "True"
    failed_since = conditions["Synced"]["lastTransitionTime"]

    await asyncio.sleep(30)
    bus.publish(ConfigAppliedToPod(pod_name="haproxy-1", pod_namespace=NAMESPACE, checksum="c1",
                                   sync=SyncMetadata()))
    bus.publish(ValidationFailed(errors=("line 3: unknown keyword 'bogus'", "more"), content_checksum="c2"))
    await settle()
    conditions = {c["type"]: c for c in (await published(kube, name))["status"]["conditions"]}
    assert (conditions["Synced"]["status"], conditions["Synced"]["reason"]) == ("True", "AllPodsSynced")
    assert conditions["Synced"]["lastTransitionTime"] != failed_since
    assert (conditions["Valid"]["status"], conditions["Valid"]["message"]) == (
        "False", "line 3: unknown keyword 'bogus'")
    await publisher.stop()


def _aux_ref(plural: str, kind: str) -> ResourceRef:
    return ResourceRef("haproxy-haptic.org/v1alpha1", plural, True, kind)


MAPS = _aux_ref("haproxymapfiles", "HAProxyMapFile")
FILES = _aux_ref("haproxygeneralfiles", "HAProxyGeneralFile")
CRT_LISTS = _aux_ref("haproxycrtlistfiles", "HAProxyCRTListFile")


async def _names(kube: InProcessKubeClient, ref: ResourceRef) -> dict[str, JSON]:
    return {item["metadata"]["name"]: item for item in (await kube.list(ref, NAMESPACE)).items}


async def test_aux_files_are_published_as_owned_resources_and_follow_the_render() -> None:
    bus, publisher, kube = await start_publisher()
    name = publisher.ctx.runtime_config_name
    first = AuxFiles(maps={"hosts.map": "a.example web\n", "path-prefix.map": "a.example/ web\n"},
                     files={"503.http": "HTTP/1.0 503\r\n\r\n"}, crt_lists={"crt-list.txt": "/etc/ssl/a.pem\n"},
                     certificates={"a.pem": "-----BEGIN PRIVATE KEY-----\nsecret\n"})
    bus.publish(ValidationCompleted(content_checksum="c1", haproxy_config=CONFIG, auxiliary_files=first))
    await settle()
    cfg = await published(kube, name)
    maps = await _names(kube, MAPS)
    assert sorted(maps) == ["haproxy-map-hosts", "haproxy-map-path-prefix"]
    hosts = maps["haproxy-map-hosts"]
    assert hosts["spec"]["mapName"] == "hosts.map" and hosts["spec"]["entries"] == "a.example web\n"
    assert hosts["spec"]["path"].endswith("/hosts.map") and hosts["spec"]["checksum"].startswith("sha256:")
    assert hosts["metadata"]["labels"] == {"haproxy-haptic.org/runtime-config": name}
    assert [(o["kind"], o["uid"]) for o in hosts["metadata"]["ownerReferences"]] == [
        ("HAProxyCfg", cfg["metadata"]["uid"])]
    assert list(await _names(kube, FILES)) == ["haproxy-file-503"]
    assert (await _names(kube, CRT_LISTS))["haproxy-crtlist-crt-list"]["spec"]["listName"] == "crt-list.txt"
    refs = cfg["status"]["auxiliaryFiles"]
    assert [r["name"] for r in refs["mapFiles"]] == ["haproxy-map-hosts", "haproxy-map-path-prefix"]
    assert refs.get("sslCertificates", []) == []  # private keys are never copied
    secrets = (await kube.list(ResourceRef("v1", "secrets", True, "Secret"), NAMESPACE)).items
    assert not any("PRIVATE KEY" in str(s) for s in secrets if s["metadata"]["name"].startswith("haproxy-cert"))

    untouched = maps["haproxy-map-path-prefix"]["metadata"]["resourceVersion"]
    second = AuxFiles(maps={"hosts.map": "a.example web\nb.example shop\n",
                            "path-prefix.map": "a.example/ web\n"}, crt_lists=first.crt_lists)
    bus.publish(ValidationCompleted(content_checksum="c2", haproxy_config=CONFIG + "#\n", auxiliary_files=second))
    await settle()
    maps = await _names(kube, MAPS)
    assert maps["haproxy-map-hosts"]["spec"]["entries"].endswith("b.example shop\n")
    assert maps["haproxy-map-path-prefix"]["metadata"]["resourceVersion"] == untouched, "unchanged: not written"
    assert await _names(kube, FILES) == {}, "a file the render no longer has is deleted"
    await publisher.stop()

    # A new leader knows nothing of what the last one wrote: it lists, and removes what is stale.
    successor = ConfigPublisher(bus, make_ctx(kube=kube))
    await successor.start()
    bus.publish(ValidationCompleted(content_checksum="c3", haproxy_config=CONFIG + "##\n",
                                    auxiliary_files=AuxFiles(maps={"hosts.map": "a.example web\n"})))
    await settle()
    assert list(await _names(kube, MAPS)) == ["haproxy-map-hosts"]
    assert await _names(kube, CRT_LISTS) == {}
    await successor.stop()
