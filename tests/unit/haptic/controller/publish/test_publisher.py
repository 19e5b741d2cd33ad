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
from haptic.controller.publish.publisher import ConfigPublisher, decode_content
from haptic.core import EventBus
from haptic.dataplane.aux_files import AuxFiles
from haptic.k8s.api import JSON
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
