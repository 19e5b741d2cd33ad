"""The controller on the simulator under disturbance: restarts, new pods, faults, failover, reinit, rotation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from simulator.cluster_objects import ingress_library_config
from tests.integration.haptic.controller.conftest import add_app, backend, routed, web_cluster

pytestmark = pytest.mark.looptime


async def test_restarted_pod_is_repaired_by_drift_prevention(make_harness: Any) -> None:
    h = await web_cluster(make_harness, config=ingress_library_config(drift_interval="10s"))
    good = h.deployed_config(0)
    await h.restart_pod("haproxy-1")
    assert backend("web") not in h.deployed_config(1)
    await h.advance(12)
    await h.settle()
    assert h.deployed_config(1) == good
    assert routed(h, 1, "web.example", "web"), "the map files are restored too"
    assert h.events("drift.prevention.triggered")
    assert h.counters(1)["restarts"] == 1


async def test_new_pod_gets_the_config(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    h.add_pod("haproxy-new")
    await h.settle()
    assert h.deployed_config("haproxy-new") == h.deployed_config(0)
    discovered = h.events("haproxy.pods.discovered")[-1]
    assert [e.pod_name for e in discovered.endpoints] == ["haproxy-0", "haproxy-1", "haproxy-new"]


async def test_removed_pod_leaves_the_status(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    h.remove_pod("haproxy-1")
    await h.settle()
    assert [e.pod_name for e in h.events("haproxy.pod.terminated")] == ["haproxy-1"]
    published = h.haproxycfg()
    assert published is not None
    assert [p["podName"] for p in published["status"]["deployedToPods"]] == ["haproxy-0"]


async def test_dataplane_503s_are_retried_until_converged(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    h.dataplane_errors("haproxy-0", 4, 503)
    add_app(h, "api", "api.example", ["10.2.0.1"])
    await h.settle(quiet=10)
    assert h.events("instance.deployment.failed"), "the injected 503s must have been seen"
    for pod in (0, 1):
        assert backend("api") in h.deployed_config(pod)
    assert h.events("deployment.completed")[-1].failed == 0


async def test_leader_killed_mid_deployment_fails_over_without_double_deployment(make_harness: Any) -> None:
    h = await web_cluster(make_harness, replicas=2)
    leader = h.leaders()
    assert len(leader) == 1
    old = leader[0]
    index = [r.name for r in h.replicas].index(old)
    pushes = [h.counters(p)["raw_pushes"] for p in (0, 1)]
    mark = len(h.trace)
    add_app(h, "api", "api.example", ["10.2.0.1"])
    for _ in range(200):
        await h.advance(0.05)
        if any(e.replica == old and e.event.type == "deployment.started" for e in h.trace[mark:]):
            break
    else:
        pytest.fail("the leader never started deploying")
    await h.advance(0.3)  # inside the deployment: pushes sent, reloads not yet verified
    assert not any(e.replica == old and e.event.type == "deployment.completed" for e in h.trace[mark:])
    killed_at = asyncio.get_running_loop().time()
    await h.kill_replica(index)
    await h.advance(20)
    await h.settle()
    follower = next(r.name for r in h.replicas if r.name != old)
    became = [e for e in h.trace[mark:] if e.replica == follower and e.event.type == "leader.became"]
    assert became, "the follower must take over"
    assert became[0].t - killed_at <= 15 + 2, "takeover within the lease duration (plus one retry period)"
    assert h.leaders() == [follower]
    for pod in (0, 1):
        assert backend("api") in h.deployed_config(pod)
        assert h.counters(pod)["raw_pushes"] == pushes[pod] + 1, "each pod got the change exactly once"
    # Never two replicas deploying at once: the dead one published nothing after the kill.
    assert not [e for e in h.trace if e.replica == old and e.t > killed_at]


async def test_config_change_reinitializes_in_process(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    replica = h.replicas[0]
    task = replica.task
    assert replica.controller.iterations == 1
    h.apply(ingress_library_config(namespace=h.namespace, extra_context={"maxconn": 4242}))
    await h.settle()
    assert replica.controller.iterations == 2
    assert replica.task is task and not task.done(), "no process (task) restart"
    assert "maxconn 4242" in h.deployed_config(0) and "maxconn 4242" in h.deployed_config(1)
    assert h.template_config()["status"]["observedGeneration"] == 2


async def test_rotated_credentials_are_used_on_next_deployment(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    h.rotate_credentials("rotated-secret-1")
    await h.settle()
    add_app(h, "api", "api.example", ["10.2.0.1"])
    await h.settle()
    for pod in (0, 1):
        assert backend("api") in h.deployed_config(pod)
    assert not h.events("instance.deployment.failed")
    assert h.events("credentials.updated")[-1].secret_version != h.events("credentials.updated")[0].secret_version
    assert "rotated-secret-1" not in h.trace_jsonl()


async def test_waits_for_missing_config_and_secret(make_harness: Any) -> None:
    h = await make_harness(config={})
    h.delete("v1", "Secret", "haproxy-credentials", h.namespace)
    await h.advance(6)
    controller = h.replicas[0].controller
    assert controller.waiting_for == "HAProxyTemplateConfig haptic/haproxy-config"
    h.apply(ingress_library_config())
    await h.advance(6)
    assert controller.waiting_for == "credentials Secret haptic/haproxy-credentials"
    assert controller.iterations == 0
    h.rotate_credentials("late")
    add_app(h, "web", "web.example", ["10.1.0.1"])
    await h.settle()
    assert controller.iterations == 1
    assert backend("web") in h.deployed_config(0)
