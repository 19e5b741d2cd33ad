"""The controller end to end on the simulator: startup, changes, runtime updates, bursts, bad templates."""

from __future__ import annotations

from typing import Any

import pytest

from simulator.cluster_objects import endpoint_slice, ingress, template_config
from tests.integration.controller.conftest import web_cluster

pytestmark = pytest.mark.looptime


def started_deployments(h: Any) -> int:
    return len(h.events("deployment.started"))


async def test_startup_deploys_to_both_pods(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    for pod in (0, 1):
        config = h.deployed_config(pod)
        assert "backend be_default_web_1" in config
        assert "server SRV_1 10.1.0.1:8080" in config
        assert "server SRV_3 127.0.0.1:1 disabled" in config
        assert h.counters(pod)["reloads"] >= 1
    completed = h.events("deployment.completed")
    assert completed and completed[-1].succeeded == 2 and completed[-1].failed == 0
    published = h.haproxycfg()
    assert published is not None
    assert "backend be_default_web_1" in published["spec"]["content"]
    assert published["spec"]["checksum"] == completed[-1].content_checksum
    pods = {p["podName"]: p for p in published["status"]["deployedToPods"]}
    assert sorted(pods) == ["haproxy-0", "haproxy-1"]
    assert all(p["checksum"] == completed[-1].content_checksum for p in pods.values())
    status = h.template_config()["status"]
    assert status["validationStatus"] == "Valid"
    assert status["observedGeneration"] == 1
    ing = h.get("networking.k8s.io/v1", "Ingress", "web", "default")
    assert ing["status"]["loadBalancer"]["ingress"] == [{"ip": "10.0.0.10"}, {"ip": "10.0.0.11"}]


async def test_added_ingress_is_deployed(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    h.apply(ingress("api", "api.example", "api"))
    h.apply(endpoint_slice("api", ["10.2.0.1"]))
    await h.settle()
    for pod in (0, 1):
        config = h.deployed_config(pod)
        assert "use_backend be_default_api_1 if { hdr(host) -i api.example }" in config
        assert "server SRV_1 10.2.0.1:8080" in config


async def test_scaling_within_slots_is_runtime_only(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    before = [h.counters(p) for p in (0, 1)]
    h.apply(endpoint_slice("web", ["10.1.0.1", "10.1.0.2", "10.1.0.3"]))
    await h.settle()
    for pod, old in zip((0, 1), before, strict=True):
        now = h.counters(pod)
        assert now["reloads"] == old["reloads"], "scaling within the slots must not reload"
        assert now["raw_pushes"] == old["raw_pushes"]
        assert now["runtime_server_updates"] > old["runtime_server_updates"]
        assert "server SRV_3 10.1.0.3:8080" in h.deployed_config(pod)


async def test_burst_of_changes_gives_one_deployment(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    deployments = started_deployments(h)
    for i in range(100):
        h.apply(ingress(f"burst-{i:03d}", f"b{i}.example", "web"))
    await h.settle()
    assert started_deployments(h) == deployments + 1
    config = h.deployed_config(0)
    assert all(f"be_default_burst-{i:03d}_1" in config for i in range(100))


async def test_invalid_rendered_config_keeps_last_good(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    good = h.deployed_config(0)
    broken = template_config(namespace=h.namespace,
                             template="global\n    no_such_keyword_here 1\ndefaults\n    mode http\n")
    h.apply(broken)
    await h.settle()
    assert h.deployed_config(0) == good and h.deployed_config(1) == good
    status = h.template_config()["status"]
    assert status["validationStatus"] == "Invalid"
    assert any("no_such_keyword_here" in e for e in status["validationErrors"])
    published = h.haproxycfg()
    assert published is not None and "no_such_keyword_here" in published["status"]["validationError"]
    assert published["spec"]["content"].strip() == good.strip() or "be_default_web_1" in published["spec"]["content"]
    # Fixed: deployed, Valid again.
    h.apply(template_config(namespace=h.namespace))
    h.apply(ingress("api", "api.example", "api"))
    await h.settle()
    assert "be_default_api_1" in h.deployed_config(0)
    assert h.template_config()["status"]["validationStatus"] == "Valid"


async def test_template_syntax_error_keeps_iteration_running(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    controller = h.replicas[0].controller
    iterations = controller.iterations
    h.apply(template_config(namespace=h.namespace, template="{% for x in %}broken"))
    await h.settle()
    status = h.template_config()["status"]
    assert status["validationStatus"] == "Invalid"
    assert status["observedGeneration"] == 2
    assert controller.iterations == iterations, "an invalid config must not replace the running iteration"
    # The old iteration still reconciles.
    h.apply(ingress("api", "api.example", "api"))
    await h.settle()
    assert "be_default_api_1" in h.deployed_config(1)
