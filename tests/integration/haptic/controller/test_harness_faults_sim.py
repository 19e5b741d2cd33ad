"""What the Harness itself guarantees to every user (not only the scenario backend): ``settle`` waits
for deployments the scheduler holds back, a Kubernetes API outage cuts open watches, applying the
credentials Secret rotates the fake pods' password, and the Lease can be taken from the leader."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from haptic.controller.context import SECRETS
from haptic.k8s.api import ApiError, NotFound, WatchOptions
from simulator.cluster_objects import credentials_secret, endpoint_slice, ingress
from simulator.kube import InProcessKubeClient
from tests.integration.haptic.controller.conftest import web_cluster

pytestmark = pytest.mark.looptime


async def test_settle_waits_through_the_retry_backoff(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    h.dataplane_errors(0, count=50, status=503)  # the next deployment to pod 0 fails; a retry follows in 5 s
    h.apply(endpoint_slice("web", ["10.1.0.7"]))
    for _ in range(60):
        await asyncio.sleep(0.5)
        if any(getattr(e, "failed", 0) for e in h.events("deployment.completed")):
            break
    assert h.busy() == "controller-0: deployment retry backoff"
    h.pod(0).dataplane.clear_faults()
    await h.settle(quiet=1.0)  # shorter than the 5 s backoff: only the scheduler check keeps it waiting
    assert h.settled and h.busy() == ""
    assert "10.1.0.7" in h.deployed_config(0), "settle returned while the retry was still held back"
    assert h.deployed_config(0) == h.deployed_config(1)


async def test_settle_waits_for_the_watches_to_come_back_after_an_outage(make_harness: Any) -> None:
    """Once an outage ends the watches reconnect only after their backoff (up to 30 s): until then the
    controller has not seen what changed meanwhile, so the installation is not converged."""
    h = await web_cluster(make_harness)
    h.kube_outage(45)
    h.apply(endpoint_slice("web", ["10.1.0.7"]))  # unseen until the watches are back
    await asyncio.sleep(46)
    pending = h.replicas[0].controller.convergence()["pending"]
    assert any("to be retried after an error" in p for p in pending), pending
    await h.settle(quiet=1.0)
    assert h.settled, h.busy()
    assert "10.1.0.7" in h.deployed_config(0), "settled before the watches came back"


async def test_kube_outage_cuts_open_watches(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    client = InProcessKubeClient(h.api)
    seen: list[str] = []

    async def watch() -> None:
        async for event in client.watch(SECRETS, h.namespace, WatchOptions(allow_bookmarks=False)):
            seen.append(event.type)

    task = asyncio.create_task(watch())
    await asyncio.sleep(1)
    assert not task.done()
    h.kube_outage(30)
    await asyncio.sleep(1)
    assert task.done(), "the watch stream survived the API outage"
    assert task.exception() is None and "ADDED" in seen


async def test_applying_the_credentials_secret_rotates_the_pods_password(make_harness: Any) -> None:
    h = await web_cluster(make_harness)
    h.apply(credentials_secret("admin", "rotated-pw", namespace=h.namespace))
    assert [p.dataplane.options.password for p in h.pods.values()] == ["rotated-pw", "rotated-pw"]
    h.apply(endpoint_slice("web", ["10.1.0.8"]))
    await h.settle()
    assert h.settled
    assert "10.1.0.8" in h.deployed_config(0) and "10.1.0.8" in h.deployed_config(1)


async def test_taking_the_lease_makes_the_leader_step_down(make_harness: Any) -> None:
    h = await web_cluster(make_harness, replicas=2)
    assert h.leaders() == ["controller-0"]
    assert h.take_lease() == "controller-1"
    await h.advance(10)
    assert h.leaders() == ["controller-1"]
    assert [e.replica for e in h.entries("leader.lost")] == ["controller-0"]
    assert all(r.alive for r in h.replicas), "a lease loss is not a crash"


async def test_in_process_webhook_refuses_a_hostile_ingress(make_harness: Any) -> None:
    h = await web_cluster(make_harness)  # the Ingress library config enables the webhook for Ingresses
    assert h.api.admission is not None
    with pytest.raises(ApiError, match=r'admission webhook ".*" denied the request: Ingress default/evil'):
        # A real API server refuses an injected host before any webhook runs; a path it lets through.
        await h.apply_admitted(ingress("evil", "evil.example", "web", path="/\n    http-request deny"))
    with pytest.raises(NotFound):
        h.get("networking.k8s.io/v1", "Ingress", "evil", "default")
    await h.apply_admitted(ingress("fine", "fine.example", "web"))
    assert h.get("networking.k8s.io/v1", "Ingress", "fine", "default")["metadata"]["name"] == "fine"
    assert [e.event.type for e in h.trace if e.event.type.startswith("webhook.validation.")][-2:] == [
        "webhook.validation.request", "webhook.validation.allowed"]
    # h.apply() stays a direct store write, no admission
    h.apply(ingress("direct", "direct.example", "web", path="/x } y"))


async def test_a_deposed_leaders_deployment_ends_with_deployment_cancelled(make_harness: Any) -> None:
    """The leader loses its Lease mid-deployment: the deployment is cancelled and says so, so that
    observers tracking "deploying" (the single_deployer invariant) see it end."""
    h = await web_cluster(make_harness, replicas=2)
    for pod in h.pods.values():
        pod.dataplane.slow_down(5.0)
    h.apply(endpoint_slice("web", ["10.1.0.9"]))
    for _ in range(40):
        await asyncio.sleep(0.5)
        started = [e for e in h.entries("deployment.started") if e.replica == "controller-0"]
        if len(started) >= 2:  # the initial one, then the one for the change
            break
    h.take_lease()
    await h.advance(10)
    for pod in h.pods.values():
        pod.dataplane.clear_faults()
    await h.settle()
    mine = [e.event.type for e in h.trace if e.replica == "controller-0" and e.event.type.startswith("deployment.")
            and e.event.type != "deployment.scheduled"]
    assert mine[-2:] == ["deployment.started", "deployment.cancelled"], mine
    assert "10.1.0.9" in h.deployed_config(0) and "10.1.0.9" in h.deployed_config(1), "the new leader deploys it"
