"""Graceful shutdown: leadership released and components stopped, cut short at the shutdown timeout."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from haptic.controller.loop.iteration import IterationSettings
from simulator.cluster_objects import ingress_library_config
from tests.integration.haptic.controller.conftest import add_app, backend, web_cluster

pytestmark = pytest.mark.looptime


def _lease_holder(h: Any) -> str | None:
    lease = h.get("coordination.k8s.io/v1", "Lease", "haptic-leader", h.namespace)
    holder: str | None = lease["spec"].get("holderIdentity")
    return holder


async def test_graceful_shutdown_releases_the_lease_and_stops_everything(
        make_harness: Any, caplog: pytest.LogCaptureFixture) -> None:
    h = await web_cluster(make_harness)
    replica = h.replicas[0]
    assert _lease_holder(h) == replica.name
    iteration = replica.controller.iteration
    assert iteration is not None and replica.task is not None
    await replica.controller.shutdown(replica.task)
    replica.alive = False
    assert replica.task.done() and not replica.task.cancelled()
    assert not _lease_holder(h), "released, so a follower takes over at once"
    statuses = {c.status for c in iteration.registry.health().components.values()}
    assert statuses <= {"stopped", "standby"}, statuses
    assert not any("shutdown took longer" in r.getMessage() for r in caplog.records)


async def test_shutdown_that_hangs_is_cut_at_the_timeout(make_harness: Any,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="haptic")
    # The release may take longer than the whole shutdown: the controller's own bound applies.
    h = await web_cluster(make_harness, settings=IterationSettings(reconcile_debounce=5.0, reinit_debounce=1.0,
                                                                   release_timeout=100.0))
    replica = h.replicas[0]
    controller, task = replica.controller, replica.task
    assert task is not None
    h.api.add_latency(3600.0)  # every API call (the Lease release among them) now hangs for an hour
    loop = asyncio.get_running_loop()
    started = loop.time()
    await controller.shutdown(task)
    replica.alive = False
    assert task.done(), "shutdown returned with the controller task finished (cancelled when cut short)"
    assert loop.time() - started < 3600.0, "the hanging release did not hold the shutdown up"
    assert any(f"shutdown took longer than {controller.shutdown_timeout:.0f}s" in r.getMessage()
               for r in caplog.records)
    h.api.clear_faults()


async def test_health_and_readiness_report_leadership_on_both_replicas(make_harness: Any) -> None:
    h = await web_cluster(make_harness, replicas=2)
    leader = h.leaders()[0]
    for replica in h.replicas:
        ready = replica.controller.readiness()
        health = replica.controller.health()
        assert ready.healthy and health.healthy, replica.name
        leadership = ready.components["leadership"]
        if replica.name == leader:
            assert (str(leadership.status), leadership.reason) == ("running", "leader")
        else:
            assert (str(leadership.status), leadership.reason) == ("standby", f"follower (leader: {leader})")
            assert str(ready.components["deployer"].status) == "standby"
    index = [r.name for r in h.replicas].index(leader)
    await h.kill_replica(index)
    await h.advance(20)
    await h.settle()
    follower = h.replicas[1 - index].controller
    assert follower.readiness().components["leadership"].reason == "leader"


async def test_hung_lease_release_does_not_hold_up_stop_or_reinitialization(
        make_harness: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="haptic")
    h = await web_cluster(make_harness)
    replica = h.replicas[0]
    controller, task = replica.controller, replica.task
    assert task is not None
    # Releasing the Lease (a write emptying holderIdentity) hangs; every other call goes through.
    original_replace = controller.ports.kube.replace

    async def hanging_replace(ref: Any, obj: Any) -> Any:
        if ref.plural == "leases" and not (obj.get("spec") or {}).get("holderIdentity"):
            await asyncio.sleep(3600.0)
        return await original_replace(ref, obj)

    controller.ports.kube.replace = hanging_replace  # type: ignore[method-assign]
    h.apply(ingress_library_config(namespace=h.namespace, extra_context={"maxconn": 4242}))
    await h.advance(15)  # reinit debounce, then the release hangs (quietly: settle alone would stop early)
    await h.settle()
    assert controller.iterations == 2, "the reinitialization went ahead"
    assert any("releasing leadership took longer than 10s" in r.getMessage() for r in caplog.records)
    add_app(h, "api", "api.example", ["10.2.0.1"])
    await h.advance(30)  # the old Lease expires; the new iteration leads
    await h.settle()
    assert "maxconn 4242" in h.deployed_config(0) and backend("api") in h.deployed_config(1)
    controller.ports.kube.replace = original_replace  # type: ignore[method-assign]
