"""Route ownership through the whole controller: a later Ingress of another namespace cannot take a host.

The loser is not routed and is told so where its author looks: a Kubernetes Event on it, its status
(the port error ``haproxy-haptic.org/HostConflict``), a metric; the webhook refuses it up front.
"""

from __future__ import annotations

from typing import Any

import pytest

from haptic.k8s.api import ApiError
from simulator.cluster_objects import ingress
from simulator.harness import Harness
from tests.integration.haptic.controller.conftest import add_app, backend

pytestmark = pytest.mark.looptime


def _namespace(h: Harness, name: str) -> None:
    h.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def _events(h: Harness, namespace: str, name: str) -> list[dict[str, Any]]:
    rt = h.rt("v1", "Event")
    items = h.api.list(rt, namespace).items
    return [e for e in items if e["involvedObject"].get("name") == name]


def _metric(h: Harness, name: str, **labels: str) -> float | None:
    replica = next(r for r in h.replicas if r.controller.is_leader)
    return replica.controller.metrics.sample(name, labels)


async def test_a_later_ingress_of_another_namespace_does_not_take_the_host(make_harness: Any) -> None:
    h = await make_harness(webhook=False)  # stored as an API server without our webhook would store it
    _namespace(h, "app")
    _namespace(h, "attacker")
    add_app(h, "web", "app.example", ["10.1.0.1"], namespace="app")
    await h.settle()
    await h.advance(2)
    add_app(h, "evil", "app.example", ["6.6.6.6"], namespace="attacker")
    await h.settle()
    for pod in (0, 1):
        config = h.deployed_config(pod)
        assert "6.6.6.6" not in config and backend("evil", namespace="attacker") not in config
        prefix = h.stored_file(pod, "maps", "path-prefix.map") or ""
        assert f"app.example/ {backend('web', namespace='app')}" in prefix.splitlines()
        assert "app.example app" in (h.stored_file(pod, "maps", "hosts.map") or "").splitlines()
    (excluded,) = [e for e in h.events("resource.excluded") if e.name == "evil"]
    assert (excluded.kind, excluded.namespace, excluded.reason, excluded.field) == (
        "Ingress", "attacker", "HostConflict", "spec.rules[0].host")
    assert "owned by namespace app" in excluded.message
    (event,) = _events(h, "attacker", "evil")
    assert (event["type"], event["reason"], event["involvedObject"]["kind"]) == ("Warning", "HostConflict", "Ingress")
    assert event["involvedObject"]["uid"] and "owned by namespace app" in event["message"]
    status = h.get("networking.k8s.io/v1", "Ingress", "evil", "attacker")["status"]["loadBalancer"]["ingress"]
    assert {p["error"] for point in status for p in point["ports"]} == {"haproxy-haptic.org/HostConflict"}
    owner = h.get("networking.k8s.io/v1", "Ingress", "web", "app")["status"]["loadBalancer"]["ingress"]
    assert all("ports" not in point for point in owner)
    assert _metric(h, "haptic_resources_excluded", kind="Ingress", reason="HostConflict") == 1
    # Its author moves it to a host of its own: routed, the status error is cleared.
    h.apply(ingress("evil", "evil.example", "evil", "attacker"))
    await h.settle()
    assert backend("evil", namespace="attacker") in h.deployed_config(0)
    assert [e.name for e in h.events("resource.readmitted")] == ["evil"]
    status = h.get("networking.k8s.io/v1", "Ingress", "evil", "attacker")["status"]["loadBalancer"]["ingress"]
    assert all("ports" not in point for point in status)
    assert [e["reason"] for e in _events(h, "attacker", "evil")] == ["HostConflict", "Readmitted"]
    assert _metric(h, "haptic_resources_excluded", kind="Ingress", reason="HostConflict") is None


async def test_the_webhook_refuses_an_ingress_claiming_another_namespaces_host(make_harness: Any) -> None:
    h = await make_harness()
    _namespace(h, "app")
    _namespace(h, "attacker")
    add_app(h, "web", "app.example", ["10.1.0.1"], namespace="app")
    await h.settle()
    with pytest.raises(ApiError, match="HostConflict"):
        await h.apply_admitted(ingress("evil", "app.example", "web", "attacker"))
    # Its own host is fine.
    await h.apply_admitted(ingress("evil", "attacker.example", "web", "attacker"))
