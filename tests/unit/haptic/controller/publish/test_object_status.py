"""``ObjectStatusApplier``: template-declared statuses are written once their config is deployed, only when
they differ from the object's, keeping transition times of unchanged conditions."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import yaml

from haptic.controller.events import DeploymentCompleted, ValidationCompleted
from haptic.controller.publish.object_status import ObjectStatusApplier
from haptic.dataplane.aux_files import AuxFiles
from haptic.k8s.api import ResourceRef
from haptic.templating.notices import ObjectRef
from haptic.templating.statuses import ObjectStatus
from simulator.kube.gateway_api import gateway_api_crds
from tests.support.controller import fake_cluster, make_ctx, started_bus
from tests.support.paths import REPO

pytestmark = pytest.mark.looptime

CLASSES = ResourceRef("gateway.networking.k8s.io/v1", "gatewayclasses", False, "GatewayClass")
G = "gateway.networking.k8s.io/v1"


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def accepted(status: str) -> dict[str, Any]:
    return {"conditions": [{"type": "Accepted", "status": status, "reason": "Accepted" if status == "True" else
                            "InvalidParameters", "message": "m", "observedGeneration": 1}]}


async def gateway_class_cluster() -> tuple[Any, Any]:
    """A fake cluster with the Gateway API CRDs and one GatewayClass, and a context whose store holds it."""
    api, kube = fake_cluster()
    crd_type = api.types.by_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    assert crd_type is not None
    for crd in gateway_api_crds().values():
        api.create(crd_type, None, crd)
    config = yaml.safe_load((REPO / "scenarios" / "configs" / "gateway-library.yaml").read_text())
    ctx = make_ctx(kube=kube, config=config)
    created = await kube.create(CLASSES, {"apiVersion": G, "kind": "GatewayClass", "metadata": {"name": "haptic"},
                                          "spec": {"controllerName": "haproxy-haptic.org/gateway-controller"}})
    ctx.stores["gatewayclasses"].apply(created)
    return kube, ctx


async def test_statuses_follow_the_deployment_and_are_written_once() -> None:
    kube, ctx = await gateway_class_cluster()
    bus = started_bus()
    applier = ObjectStatusApplier(bus, ctx)
    await applier.start()
    ref = ObjectRef("GatewayClass", "", "haptic", G)

    def validated(checksum: str, status: dict[str, Any]) -> ValidationCompleted:
        return ValidationCompleted(content_checksum=checksum, haproxy_config="", auxiliary_files=AuxFiles(),
                                   statuses=(ObjectStatus(ref, status, G),))

    bus.publish(validated("c1", accepted("True")))
    await settle()
    assert applier.patched == 0, "nothing is written before the config it describes is deployed"
    bus.publish(DeploymentCompleted(total=1, succeeded=1, failed=0, content_checksum="c1"))
    await settle()
    written = await kube.get(CLASSES, "haptic")
    [condition] = written["status"]["conditions"]
    assert (condition["status"], condition["reason"]) == ("True", "Accepted")
    assert condition["lastTransitionTime"] != "1970-01-01T00:00:00Z"
    ctx.stores["gatewayclasses"].apply(written)

    bus.publish(validated("c1", accepted("True")))  # the same render again: the object already has it
    await settle()
    assert applier.patched == 1
    bus.publish(validated("c2", accepted("False")))
    bus.publish(DeploymentCompleted(total=1, succeeded=0, failed=1, content_checksum="c2"))
    await settle()
    assert applier.patched == 1, "a deployment that reached no pod does not make the statuses true"
    bus.publish(DeploymentCompleted(total=1, succeeded=1, failed=0, content_checksum="c2"))
    await settle()
    assert (await kube.get(CLASSES, "haptic"))["status"]["conditions"][0]["status"] == "False"
    assert applier.patched == 2
    await applier.stop()


async def test_an_object_that_needed_no_patch_is_not_compared_again_until_it_or_its_status_changes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import haptic.controller.publish.object_status as module

    kube, ctx = await gateway_class_cluster()
    applier = ObjectStatusApplier(started_bus(), ctx)
    ref = ObjectRef("GatewayClass", "", "haptic", G)
    compared: list[Any] = []
    real = module.status_patch

    def counting(desired: Any, current: Any, now: str) -> Any:
        compared.append(desired)
        return real(desired, current, now)

    monkeypatch.setattr(module, "status_patch", counting)
    await applier.apply((ObjectStatus(ref, accepted("True"), G),))
    assert (len(compared), applier.patched) == (1, 1)
    written = await kube.get(CLASSES, "haptic")
    ctx.stores["gatewayclasses"].apply(written)
    await applier.apply((ObjectStatus(ref, accepted("True"), G),))
    assert (len(compared), applier.patched) == (2, 1), "the new version of the object is compared once"
    await applier.apply((ObjectStatus(ref, accepted("True"), G),))
    assert (len(compared), applier.patched) == (2, 1), "same object, equal status: not compared again"
    await applier.apply((ObjectStatus(ref, accepted("False"), G),))
    assert (len(compared), applier.patched) == (3, 2), "another status is compared and written"
    assert (await kube.get(CLASSES, "haptic"))["status"]["conditions"][0]["status"] == "False"


async def test_the_same_statuses_over_unwritten_stores_are_not_looked_at_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    kube, ctx = await gateway_class_cluster()
    applier = ObjectStatusApplier(started_bus(), ctx)
    ref = ObjectRef("GatewayClass", "", "haptic", G)
    statuses = (ObjectStatus(ref, accepted("True"), G),)
    await applier.apply(statuses)  # written
    ctx.stores["gatewayclasses"].apply(await kube.get(CLASSES, "haptic"))
    looked: list[Any] = []
    real = ObjectStatusApplier._lookup
    monkeypatch.setattr(ObjectStatusApplier, "_lookup", staticmethod(lambda i, s: looked.append(i) or real(i, s)))
    await applier.apply(statuses)
    assert len(looked) == 1, "the object changed since (its status was written): looked at"
    await applier.apply(statuses)
    assert len(looked) == 1, "nothing written since the apply that found everything in place"
    changed = dict(await kube.get(CLASSES, "haptic"))
    changed["metadata"] = {**changed["metadata"], "labels": {"x": "y"}}
    ctx.stores["gatewayclasses"].apply(changed)
    await applier.apply(statuses)
    assert len(looked) == 2, "a store written to since: looked at again"
