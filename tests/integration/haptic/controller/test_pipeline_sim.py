"""The controller end to end on the simulator with the Ingress library: startup, changes, runtime
updates, bursts, bad templates."""

from __future__ import annotations

from typing import Any

import pytest

from simulator.cluster_objects import endpoint_slice, ingress, ingress_library_config
from tests.integration.haptic.controller.conftest import add_app, backend, routed, web_cluster

pytestmark = pytest.mark.looptime

BROKEN = "global\n    no_such_keyword_here 1\ndefaults\n    mode http\n"


def started_deployments(h: Any) -> int:
    return len(h.events("deployment.started"))


async def test_startup_deploys_to_both_pods(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    for pod in (0, 1):
        config = h.deployed_config(pod)
        assert f"backend {backend('web')}" in config
        assert "server SRV_1 10.1.0.1:8080" in config
        assert "server SRV_3 127.0.0.1:1 disabled" in config
        assert routed(h, pod, "web.example", "web")
        assert h.counters(pod)["reloads"] >= 1
    completed = h.events("deployment.completed")
    assert completed and completed[-1].succeeded == 2 and completed[-1].failed == 0
    published = h.haproxycfg()
    assert published is not None
    assert f"backend {backend('web')}" in published["spec"]["content"]
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
    add_app(h, "api", "api.example", ["10.2.0.1"])
    await h.settle()
    for pod in (0, 1):
        config = h.deployed_config(pod)
        assert f"backend {backend('api')}" in config
        assert "server SRV_1 10.2.0.1:8080" in config
        assert routed(h, pod, "api.example", "api")


async def test_scaling_within_slots_is_runtime_only(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    before = [h.counters(p) for p in (0, 1)]
    h.apply(endpoint_slice("web", ["10.1.0.1", "10.1.0.2", "10.1.0.3"]))
    await h.settle()
    h.apply(endpoint_slice("web", ["10.1.0.2", "10.1.0.3"]))
    await h.settle()
    for pod, old in zip((0, 1), before, strict=True):
        now = h.counters(pod)
        assert now["reloads"] == old["reloads"], "scaling within the slots must not reload"
        assert now["raw_pushes"] == old["raw_pushes"]
        assert now["commits"] == old["commits"]
        assert now["runtime_server_updates"] >= old["runtime_server_updates"] + 2
        config = h.deployed_config(pod)
        assert "server SRV_3 10.1.0.3:8080" in config
        assert "server SRV_1 127.0.0.1:1 disabled" in config, "a freed slot is disabled, the others keep theirs"
        assert "server SRV_2 10.1.0.2:8080" in config


async def test_burst_of_changes_gives_one_deployment(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    deployments = started_deployments(h)
    for i in range(100):
        h.apply(ingress(f"burst-{i:03d}", f"b{i}.example", "web"))
    await h.settle()
    assert started_deployments(h) == deployments + 1
    config = h.deployed_config(0)
    assert all(f"backend {backend(f'burst-{i:03d}', 'web')}" in config for i in range(100))


async def test_invalid_rendered_config_keeps_last_good(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    good = h.deployed_config(0)
    h.apply(ingress_library_config(namespace=h.namespace, extra_spec={"haproxyConfig": {"template": BROKEN}}))
    await h.settle()
    assert h.deployed_config(0) == good and h.deployed_config(1) == good
    status = h.template_config()["status"]
    assert status["validationStatus"] == "Invalid"
    assert any("no_such_keyword_here" in e for e in status["validationErrors"])
    published = h.haproxycfg()
    assert published is not None and "no_such_keyword_here" in published["status"]["validationError"]
    assert f"backend {backend('web')}" in published["spec"]["content"]
    # Fixed: deployed, Valid again.
    h.apply(ingress_library_config(namespace=h.namespace))
    add_app(h, "api", "api.example", ["10.2.0.1"])
    await h.settle()
    assert f"backend {backend('api')}" in h.deployed_config(0)
    assert h.template_config()["status"]["validationStatus"] == "Valid"


async def test_template_syntax_error_keeps_iteration_running(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    controller = h.replicas[0].controller
    iterations = controller.iterations
    h.apply(ingress_library_config(namespace=h.namespace,
                                   extra_spec={"haproxyConfig": {"template": "{% for x in %}broken"}}))
    await h.settle()
    status = h.template_config()["status"]
    assert status["validationStatus"] == "Invalid"
    assert status["observedGeneration"] == 2
    assert controller.iterations == iterations, "an invalid config must not replace the running iteration"
    # The old iteration still reconciles.
    add_app(h, "api", "api.example", ["10.2.0.1"])
    await h.settle()
    assert f"backend {backend('api')}" in h.deployed_config(1)


async def test_small_slot_template_still_runs(make_harness: Any) -> None:
    """The Harness without the library: a config given as data, no Services needed."""
    from simulator.cluster_objects import template_config

    h = await make_harness(config=template_config())
    h.apply(ingress("web", "web.example", "web"))
    h.apply(endpoint_slice("web", ["10.1.0.1"]))
    await h.settle()
    assert "server SRV_1 10.1.0.1:8080" in h.deployed_config(0)
    assert "backend be_default_web_1" in h.deployed_config(1)
