"""Graceful shutdown: leadership released and components stopped, cut short at the shutdown timeout."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from tests.integration.controller.conftest import web_cluster

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
    h = await web_cluster(make_harness)
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
